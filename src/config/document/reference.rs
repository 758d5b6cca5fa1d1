//! The oracle of the differential tests and of the `toml` fuzz target:
//! the toml crate's parse of the same text, and ours, each shown in one
//! form: every value with its kind, its value and its span, every table's
//! keys in order with theirs. Two parses agree when the two forms are the
//! same string.
//!
//! What it does not compare: an integer beyond i64 only by its text, a
//! date-time only by its span (ours keeps no value), and the errors'
//! wording and place (each parser words its own; both must refuse).
//! Where toml accepts what TOML 1.1 does not (`toml_lenient`), ours
//! refusing agrees.

use std::fmt::Write as _;

use toml::de::{DeTable, DeValue};

use super::{parse, Error, Item, Value};

/// Our parse, shown.
pub(crate) fn ours(text: &str) -> Result<String, Error> {
    let doc = parse(text)?;
    let mut out = String::new();
    show_ours(&doc, &mut out);
    Ok(out)
}

/// The toml crate's parse, shown; its error's message when it refuses.
pub(crate) fn theirs(text: &str) -> Result<String, String> {
    let doc = DeTable::parse(text).map_err(|e| e.message().to_string())?;
    let mut out = String::new();
    let root = toml::Spanned::new(doc.span(), DeValue::Table(doc.into_inner()));
    show_theirs(&root, &mut out)?;
    Ok(out)
}

fn show_ours(v: &Value<'_>, out: &mut String) {
    let span = v.span();
    match v.get_ref() {
        Item::String(s) => write!(out, "string {s:?}"),
        Item::Integer(n) => match n.value {
            Some(i) => write!(out, "integer {i}"),
            None => write!(out, "integer beyond i64"),
        },
        Item::Float(x) => write!(out, "float {x}"),
        Item::Boolean(b) => write!(out, "boolean {b}"),
        Item::Datetime => write!(out, "date-time"),
        Item::Array(a) => {
            out.push('[');
            for item in a.iter() {
                show_ours(item, out);
                out.push_str(", ");
            }
            write!(out, "]")
        }
        Item::Table(t) => {
            out.push('{');
            for (k, item) in t.iter() {
                let _ = write!(out, "{:?}@{:?} = ", k.get_ref(), k.span());
                show_ours(item, out);
                out.push_str(", ");
            }
            write!(out, "}}")
        }
    }
    .expect("a String");
    let _ = write!(out, "@{span:?}");
}

/// toml's tree shown; an error for what its parser lets through to its
/// deserializer, which refuses it there: a number whose text is not one
/// (`0x`, `1)2`).
fn show_theirs(v: &toml::Spanned<DeValue<'_>>, out: &mut String) -> Result<(), String> {
    let span = v.span();
    match v.get_ref() {
        DeValue::String(s) => write!(out, "string {:?}", s.as_ref()),
        DeValue::Integer(n) if !is_digits(n.as_str(), n.radix()) => return Err(format!("integer {:?} at {span:?}", n.as_str())),
        DeValue::Float(x) if x.as_str().parse::<f64>().is_err() => return Err(format!("float {:?} at {span:?}", x.as_str())),
        DeValue::Integer(n) => match i64::from_str_radix(n.as_str(), n.radix()) {
            Ok(i) => write!(out, "integer {i}"),
            Err(_) => write!(out, "integer beyond i64"),
        },
        DeValue::Float(x) => write!(out, "float {}", x.as_str()),
        DeValue::Boolean(b) => write!(out, "boolean {b}"),
        DeValue::Datetime(_) => write!(out, "date-time"),
        DeValue::Array(a) => {
            out.push('[');
            for item in a.iter() {
                show_theirs(item, out)?;
                out.push_str(", ");
            }
            write!(out, "]")
        }
        DeValue::Table(t) => {
            out.push('{');
            for (k, item) in t.iter() {
                let _ = write!(out, "{:?}@{:?} = ", k.get_ref().as_ref(), k.span());
                show_theirs(item, out)?;
                out.push_str(", ");
            }
            write!(out, "}}")
        }
    }
    .expect("a String");
    let _ = write!(out, "@{span:?}");
    Ok(())
}

/// A sign, then at least one digit of `radix`, and nothing else.
fn is_digits(s: &str, radix: u32) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    !s.is_empty() && s.chars().all(|c| c.is_digit(radix))
}

/// Where toml is more lenient than TOML 1.1 and we are not: a line break
/// or a comment between a key and its `=`, or between the `=` and the
/// value, inside an inline table (`{ a # c` then `= 1 }` on the next
/// line), which toml 1.2 accepts and the ABNF refuses (`keyval-sep = ws
/// "=" ws`, `ws` being spaces and tabs).
fn toml_lenient(text: &str, e: &Error) -> bool {
    let stopped_at_break = text[e.at..].starts_with(['#', '\n', '\r']);
    stopped_at_break && (e.message.starts_with("expected `=` after the key") || e.message.starts_with("expected a value"))
}

/// The two parses of `text` compared: None when they agree, else what
/// differs. Both refusing agrees; ours refusing a nesting deeper than
/// `MAX_DEPTH` where toml accepts agrees too (the limit is ours), and so
/// does ours refusing what only toml's leniency lets through
/// (`toml_lenient`).
pub(crate) fn differ(text: &str) -> Option<String> {
    match (ours(text), theirs(text)) {
        (Ok(a), Ok(b)) if a == b => None,
        (Ok(a), Ok(b)) => Some(format!("trees differ:\n ours:   {a}\n theirs: {b}")),
        (Err(_), Err(_)) => None,
        (Err(e), Ok(_)) if e.message.contains("nested more than") || toml_lenient(text, &e) => None,
        (Err(e), Ok(b)) => Some(format!("we refuse ({} at {}), toml accepts: {b}", e.message, e.at)),
        (Ok(a), Err(e)) => Some(format!("we accept, toml refuses ({e}): {a}")),
    }
}
