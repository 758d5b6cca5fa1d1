//! The key path of a deserialization error, found from its span.
//!
//! Errors name the key, e.g. `interface[1].name`. That path used to come
//! from serde_path_to_error, whose wrappers around every visitor were
//! monomorphised for each profile type: 229 KiB of .text (x86_64 release
//! build) for a string needed only when a profile is bad. Instead, once
//! deserializing has failed, the text is parsed again into toml's spanned
//! tree and walked for the key or value whose span is the error's: toml
//! gives each error exactly that span (the key's for an unknown field or
//! variant, the value's otherwise, a table's for a field missing from it).
//!
//! Spans are compared for equality, not containment: a table's span is
//! only its `[header]`. Two things share a span: an array of tables and
//! its first element. The error is the array's only when it is about the
//! sequence itself (`invalid length`, `invalid type: sequence`, see
//! `WHOLE`); else it is the element's. An unknown variant is named by the
//! enum's key, not by the variant written under it.

use std::fmt::Write;
use std::ops::Range;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// Errors about a sequence itself: serde's, and toml's for an enum or a
/// unit variant written as an array.
const WHOLE: &[&str] = &[
    "invalid length ",
    "invalid type: sequence",
    "wanted string or table",
    "expected empty array",
];

/// What is sought: the span, and how to read the error's message.
struct Find<'a> {
    span: &'a Range<usize>,
    /// The error is about a whole array, not its first element.
    whole: bool,
    /// The error is an unknown variant: stop at the enum's key.
    variant: bool,
}

/// The dotted path (`a.b[2].c`) of the key or value at `span` in `text`,
/// for an error with `message`; empty for the document itself or when
/// nothing is at `span`.
pub(super) fn key_at(text: &str, span: &Range<usize>, message: &str) -> String {
    let find = Find {
        span,
        whole: WHOLE.iter().any(|m| message.starts_with(m)),
        variant: message.starts_with("unknown variant "),
    };
    let mut path = String::new();
    if let Ok(root) = DeTable::parse(text) {
        find.table(root.get_ref(), &mut path);
    }
    path
}

impl Find<'_> {
    /// Appends the path below table `t` to `path`; true when found.
    fn table(&self, t: &DeTable<'_>, path: &mut String) -> bool {
        for (k, v) in t.iter() {
            let len = path.len();
            if k.span() == *self.span {
                if !self.variant {
                    push_key(path, k.get_ref());
                }
                return true;
            }
            push_key(path, k.get_ref());
            if self.value(v, path) {
                return true;
            }
            path.truncate(len);
        }
        false
    }

    /// Appends the path below `v`, already named in `path`; true when `v`
    /// or something in it is at the span.
    fn value(&self, v: &Spanned<DeValue<'_>>, path: &mut String) -> bool {
        let here = v.span() == *self.span;
        match v.get_ref() {
            DeValue::Table(t) => here || self.table(t, path),
            DeValue::Array(a) => {
                if here && self.whole {
                    return true;
                }
                for (i, e) in a.iter().enumerate() {
                    let len = path.len();
                    let _ = write!(path, "[{i}]");
                    if self.value(e, path) {
                        return true;
                    }
                    path.truncate(len);
                }
                here
            }
            _ => here,
        }
    }
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

#[cfg(test)]
mod tests {
    /// Spans shared or owned by someone else: each key below is what
    /// serde_path_to_error gave (checked before it was removed).
    #[test]
    fn shared_spans_name_the_right_key() {
        let head = "[board]\nname = \"t\"\n[[interface]]\nname = \"eth0\"\n";
        for (tail, at, key) in [
            (
                "[[interface]]\nrole = \"lan\"\n",
                (5, 1),
                "interface[1].name",
            ),
            ("role = { a = 1 }\n", (5, 10), "interface[0].role"),
            ("role = { lan = 1 }\n", (5, 16), "interface[0].role.lan"),
            ("[[interface.role]]\n", (5, 1), "interface[0].role"),
        ] {
            let e = super::super::parse_bytes("f", format!("{head}{tail}").as_bytes()).unwrap_err();
            assert_eq!(
                ((e.line, e.column), e.key.as_str()),
                (at, key),
                "{tail:?}: {e}"
            );
        }
        let e = super::super::parse_bytes("f", b"[[board]]\nname = \"t\"\n").unwrap_err();
        assert_eq!(
            ((e.line, e.column), e.key.as_str()),
            ((1, 1), "board[0]"),
            "{e}"
        );
    }
}
