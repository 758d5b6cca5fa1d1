//! A serde `Deserializer` over the document toml parsed (`DeTable`).
//!
//! toml parses the text; serde's derived code builds the model; this is
//! the small piece between them. It replaces toml's own value deserializer
//! for size: toml forwards every request to one `deserialize_any` that can
//! hand any kind of value to any visitor, so each of the profile model's
//! (type, visitor) pairs got a copy of all of it, about 290 KiB of the
//! mipsel binary. Here each request accepts only the kind of value it asks
//! for and calls one visitor method; any other kind is serde's
//! `invalid type` error, worded by the visitor as before.
//!
//! It also tracks where an error is. Each error gets the span of the value
//! (or, for an unknown field, of the key) it is about, and collects the key
//! path (`interface[1].name`) as it unwinds through the tables and arrays
//! above it.
//!
//! It supports only what the model uses: tables as structs and maps (string
//! keys), arrays as sequences, unit enums written as strings, integers,
//! floats (for float fields only), booleans and strings, `Option` (an
//! absent key is `None`), and
//! `Spanned` (ours, `config::spanned`). TOML date-times are refused, like any other value of
//! a kind the model does not expect.

use std::fmt;
use std::ops::Range;

use serde::de::{self, DeserializeSeed, Expected, Unexpected, Visitor};
use toml::de::{DeArray, DeInteger, DeTable, DeValue};
use toml::Spanned;

/// A deserialization error, where it is, and the key path to it. Boxed:
/// every `Result` the derived code moves around carries one pointer
/// instead of the whole error.
#[derive(Debug)]
pub(super) struct Error(Box<Inner>);

#[derive(Debug)]
pub(super) struct Inner {
    pub message: String,
    pub span: Option<Range<usize>>,
    /// Innermost first: pushed while the error unwinds.
    rev_path: Vec<Segment>,
}

#[derive(Debug)]
enum Segment {
    Key(String),
    Index(usize),
}

impl std::ops::Deref for Error {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl Inner {
    /// The key path, outermost first: `a.b[2].c`; empty at the top level.
    pub(super) fn key(&self) -> String {
        let mut key = String::new();
        for seg in self.rev_path.iter().rev() {
            match seg {
                Segment::Key(k) => {
                    if !key.is_empty() {
                        key.push('.');
                    }
                    key.push_str(k);
                }
                Segment::Index(i) => key.push_str(&format!("[{i}]")),
            }
        }
        key
    }
}

impl Error {
    /// Attach `span` unless a deeper value already gave one.
    fn at(mut self, span: &Range<usize>) -> Error {
        if self.0.span.is_none() {
            self.0.span = Some(span.clone());
        }
        self
    }

    fn under(mut self, seg: Segment) -> Error {
        self.0.rev_path.push(seg);
        self
    }
}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(Box::new(Inner { message: msg.to_string(), span: None, rev_path: Vec::new() }))
    }

    // serde's own wording, but through `Shown` instead of `Unexpected`'s
    // Display, whose float arm links core's float formatting.
    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        de::Error::custom(format_args!("invalid type: {}, expected {}", Shown(unexp), exp))
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        de::Error::custom(format_args!("invalid value: {}, expected {}", Shown(unexp), exp))
    }
}

/// An `Unexpected` as serde words it. A float is never shown: the only
/// visitor that ever gets one (`watchdog::Load`) takes every float, and
/// `deserialize_any` refuses floats (see `deserialize_f64`), so the arm
/// names the kind without the value and core's float printing stays out
/// of the binary (about 12 KiB on a board).
struct Shown<'a>(Unexpected<'a>);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Unexpected::Bool(b) => write!(f, "boolean `{b}`"),
            Unexpected::Unsigned(i) => write!(f, "integer `{i}`"),
            Unexpected::Signed(i) => write!(f, "integer `{i}`"),
            Unexpected::Float(_) => f.write_str("floating point"),
            Unexpected::Char(c) => write!(f, "character `{c}`"),
            Unexpected::Str(s) => write!(f, "string {s:?}"),
            Unexpected::Bytes(_) => f.write_str("byte array"),
            Unexpected::Unit => f.write_str("unit value"),
            Unexpected::Option => f.write_str("Option value"),
            Unexpected::NewtypeStruct => f.write_str("newtype struct"),
            Unexpected::Seq => f.write_str("sequence"),
            Unexpected::Map => f.write_str("map"),
            Unexpected::Enum => f.write_str("enum"),
            Unexpected::UnitVariant => f.write_str("unit variant"),
            Unexpected::NewtypeVariant => f.write_str("newtype variant"),
            Unexpected::TupleVariant => f.write_str("tuple variant"),
            Unexpected::StructVariant => f.write_str("struct variant"),
            Unexpected::Other(other) => f.write_str(other),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Deserialize a `T` from a parsed document. Out of line, like the
/// parser and the validation (`config::parse`): inlined together, their
/// frames add up on the stack instead of taking turns.
#[inline(never)]
pub(super) fn from_document<T: de::DeserializeOwned>(doc: Spanned<DeTable<'_>>) -> Result<T, Error> {
    let span = doc.span();
    let root = Spanned::new(span, DeValue::Table(doc.into_inner()));
    T::deserialize(ValueDe(&root))
}

/// One value and its span.
struct ValueDe<'a>(&'a Spanned<DeValue<'a>>);

/// A TOML integer's value; None beyond i64 (toml keeps the digits and the
/// radix).
fn int_value(n: &DeInteger<'_>) -> Option<i64> {
    i64::from_str_radix(n.as_str(), n.radix()).ok()
}

/// What a value is, for `invalid type` errors.
fn unexpected<'a>(v: &'a DeValue<'_>) -> Unexpected<'a> {
    match v {
        DeValue::String(s) => Unexpected::Str(s),
        DeValue::Integer(n) => int_value(n).map_or(Unexpected::Other("integer"), Unexpected::Signed),
        DeValue::Float(_) => Unexpected::Other("floating-point number"),
        DeValue::Boolean(b) => Unexpected::Bool(*b),
        DeValue::Datetime(_) => Unexpected::Other("date-time"),
        DeValue::Array(_) => Unexpected::Seq,
        DeValue::Table(_) => Unexpected::Map,
    }
}

fn wrong(v: &DeValue<'_>, exp: &dyn Expected) -> Error {
    de::Error::invalid_type(unexpected(v), exp)
}

impl<'a> ValueDe<'a> {
    fn span(&self) -> Range<usize> {
        self.0.span()
    }

    fn str(&self, exp: &dyn Expected) -> Result<&'a str, Error> {
        match self.0.get_ref() {
            DeValue::String(s) => Ok(s),
            v => Err(wrong(v, exp)),
        }
    }

    fn int(&self, exp: &dyn Expected) -> Result<i64, Error> {
        match self.0.get_ref() {
            DeValue::Integer(n) => int_value(n).ok_or_else(|| de::Error::custom(format!("integer {n} is too large"))),
            v => Err(wrong(v, exp)),
        }
    }

    fn table(&self, exp: &dyn Expected) -> Result<&'a DeTable<'a>, Error> {
        match self.0.get_ref() {
            DeValue::Table(t) => Ok(t),
            v => Err(wrong(v, exp)),
        }
    }

    fn array(&self, exp: &dyn Expected) -> Result<&'a DeArray<'a>, Error> {
        match self.0.get_ref() {
            DeValue::Array(a) => Ok(a),
            v => Err(wrong(v, exp)),
        }
    }
}

/// The span of a value is given to every error from inside it that has
/// none yet.
macro_rules! at_span {
    ($self:ident, $body:expr) => {{
        let span = $self.span();
        let r: Result<_, Error> = $body;
        r.map_err(|e| e.at(&span))
    }};
}

/// `forward!(to: from...)`: each `from` method does what `to` does.
macro_rules! forward {
    ($to:ident: $($from:ident)+) => {$(
        fn $from<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
            self.$to(v)
        }
    )+};
}

impl<'de> de::Deserializer<'de> for ValueDe<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        at_span!(
            self,
            match self.0.get_ref() {
                DeValue::String(s) => v.visit_str(s),
                DeValue::Integer(_) => self.int(&v).and_then(|n| v.visit_i64(n)),
                DeValue::Boolean(b) => v.visit_bool(*b),
                DeValue::Array(a) => v.visit_seq(SeqDe { items: a, next: 0 }),
                DeValue::Table(t) => v.visit_map(MapDe { iter: t.iter(), value: None }),
                other => Err(wrong(other, &v)),
            }
        )
    }

    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        at_span!(
            self,
            match self.0.get_ref() {
                DeValue::Boolean(b) => v.visit_bool(*b),
                other => Err(wrong(other, &v)),
            }
        )
    }

    fn deserialize_i64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        at_span!(self, self.int(&v).and_then(|n| v.visit_i64(n)))
    }

    // Every integer width goes through i64 (TOML integers are i64); serde's
    // visitors for the narrower types check the range and say so.
    forward!(deserialize_i64: deserialize_i8 deserialize_i16 deserialize_i32 deserialize_u8
        deserialize_u16 deserialize_u32 deserialize_u64);

    /// Only a type that asks for a float gets one (an integer will do
    /// too); `deserialize_any` refuses floats, so that no other visitor
    /// ever formats one in an error: that keeps core's float printing,
    /// like its float parsing (see `float`), out of the binary.
    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        at_span!(
            self,
            match self.0.get_ref() {
                DeValue::Float(x) => match float(x.as_str()) {
                    Some(f) => v.visit_f64(f),
                    None => Err(de::Error::custom(format!("float {x} is out of range"))),
                },
                _ => self.int(&v).and_then(|n| v.visit_i64(n)),
            }
        )
    }
    forward!(deserialize_f64: deserialize_f32);

    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        at_span!(self, self.str(&v).and_then(|s| v.visit_str(s)))
    }
    forward!(deserialize_str: deserialize_string deserialize_char deserialize_identifier);

    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        at_span!(self, self.array(&v).and_then(|a| v.visit_seq(SeqDe { items: a, next: 0 })))
    }

    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        at_span!(self, self.table(&v).and_then(|t| v.visit_map(MapDe { iter: t.iter(), value: None })))
    }

    fn deserialize_struct<V: Visitor<'de>>(self, _name: &'static str, _fields: &'static [&'static str], v: V) -> Result<V::Value, Error> {
        self.deserialize_map(v)
    }

    /// An absent key is `None` (serde's derive handles that); a present
    /// one is always `Some`: TOML has no null.
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_some(self)
    }

    /// `Spanned` (`super::spanned::NAME`) asks for its value this way and
    /// is handed a sequence: the value's span (start, end), then the value.
    fn deserialize_newtype_struct<V: Visitor<'de>>(self, name: &'static str, v: V) -> Result<V::Value, Error> {
        if name == super::spanned::NAME {
            let span = self.0.span();
            v.visit_seq(SpannedSeq { start: Some(span.start), end: Some(span.end), value: Some(self) })
        } else {
            v.visit_newtype_struct(self)
        }
    }

    /// Unit variants only, written as strings: `role = "lan"`.
    fn deserialize_enum<V: Visitor<'de>>(self, _name: &'static str, _variants: &'static [&'static str], v: V) -> Result<V::Value, Error> {
        at_span!(self, self.str(&v).and_then(|s| v.visit_enum(de::value::StrDeserializer::<Error>::new(s))))
    }

    serde::forward_to_deserialize_any! {
        bytes byte_buf unit unit_struct tuple tuple_struct ignored_any
    }
}

/// The value of a TOML float from its text, which toml has checked and
/// stripped of underscores: `[+-]DIGITS[.DIGITS][(e|E)[+-]DIGITS]`, or
/// `inf` / `nan` with an optional sign. None when out of range.
///
/// A literal of up to 15 significant digits with a decimal exponent within
/// ±22, which covers what profiles hold (load limits such as 4.5), is
/// converted exactly: both the digits and the power of ten are exact
/// doubles, and one IEEE division or multiplication rounds correctly.
/// Longer literals may be off in the last bits. core's parser, exact for
/// all, costs about 8 KiB of code and its tables on a board.
fn float(text: &str) -> Option<f64> {
    let (neg, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let f = match body {
        "inf" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => {
            let (digits, exp) = match body.find(['e', 'E']) {
                Some(i) => (&body[..i], body[i + 1..].parse::<i32>().ok()?),
                None => (body, 0),
            };
            let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
            let mut mantissa: u64 = 0;
            let mut scale = exp;
            for (i, c) in int.bytes().chain(frac.bytes()).enumerate() {
                let d = u64::from(c.checked_sub(b'0').filter(|d| *d <= 9)?);
                if mantissa < 100_000_000_000_000_000 {
                    mantissa = mantissa * 10 + d;
                    if i >= int.len() {
                        scale -= 1;
                    }
                } else if i < int.len() {
                    scale += 1; // a digit past what u64 keeps, left of the point
                }
            }
            if mantissa == 0 {
                return Some(if neg { -0.0 } else { 0.0 });
            }
            let mut f = mantissa as f64;
            let mut pow = 1.0f64;
            for _ in 0..scale.unsigned_abs().min(400) {
                pow *= 10.0;
            }
            if scale < 0 {
                f /= pow;
            } else {
                f *= pow;
            }
            if f.is_infinite() {
                return None;
            }
            f
        }
    };
    Some(if neg { -f } else { f })
}

impl de::IntoDeserializer<'_, Error> for ValueDe<'_> {
    type Deserializer = Self;
    fn into_deserializer(self) -> Self {
        self
    }
}

/// The elements of an array; an error is under its index.
struct SeqDe<'a> {
    items: &'a DeArray<'a>,
    next: usize,
}

impl<'de> de::SeqAccess<'de> for SeqDe<'_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        let Some(item) = self.items.get(self.next) else {
            return Ok(None);
        };
        let i = self.next;
        self.next += 1;
        seed.deserialize(ValueDe(item)).map(Some).map_err(|e| e.under(Segment::Index(i)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len() - self.next)
    }
}

/// What `Spanned` reads: its span's start and end, then the value.
struct SpannedSeq<'a> {
    start: Option<usize>,
    end: Option<usize>,
    value: Option<ValueDe<'a>>,
}

impl<'de> de::SeqAccess<'de> for SpannedSeq<'_> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>, Error> {
        if let Some(n) = self.start.take().or_else(|| self.end.take()) {
            return seed.deserialize(de::value::UsizeDeserializer::<Error>::new(n)).map(Some);
        }
        self.value.take().map(|v| seed.deserialize(v)).transpose()
    }
}

type TableIter<'a> = toml::map::Iter<'a, Spanned<std::borrow::Cow<'a, str>>, Spanned<DeValue<'a>>>;

/// The keys and values of a table. A key's error (an unknown field) is at
/// the key; a value's is under the key.
struct MapDe<'a> {
    iter: TableIter<'a>,
    value: Option<(&'a str, &'a Spanned<DeValue<'a>>)>,
}

impl<'de> de::MapAccess<'de> for MapDe<'_> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Error> {
        let Some((k, v)) = self.iter.next() else {
            return Ok(None);
        };
        self.value = Some((k.get_ref(), v));
        let span = k.span();
        seed.deserialize(de::value::StrDeserializer::<Error>::new(k.get_ref()))
            .map(Some)
            .map_err(|e| e.at(&span).under(Segment::Key(k.get_ref().to_string())))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let (k, v) = self.value.take().expect("next_key_seed first");
        seed.deserialize(ValueDe(v)).map_err(|e| e.under(Segment::Key(k.to_string())))
    }
}

#[cfg(test)]
mod tests {
    use super::float;

    #[test]
    fn float_literals() {
        // Exact where the literal is short (compared with core's parser).
        for text in ["4.5", "0.01", "1000", "1e3", "-2E-2", "+1.0", "3.1415", "0.1", "99.99", "1000.0", "123456789012345.0", "5e22", "-0.0"]
        {
            assert_eq!(float(text), Some(text.parse::<f64>().unwrap()), "{text}");
        }
        // Close for long ones.
        for text in ["6.626e-34", "123456789012345678901234.5", "0.000000000000000000000000001234", "1.5e300"] {
            let want = text.parse::<f64>().unwrap();
            let got = float(text).unwrap();
            assert!(((got - want) / want).abs() < 1e-12, "{text}: {got} vs {want}");
        }
        assert_eq!(float("inf"), Some(f64::INFINITY));
        assert_eq!(float("-inf"), Some(f64::NEG_INFINITY));
        assert!(float("nan").unwrap().is_nan());
        assert_eq!(float("0e400"), Some(0.0));
        assert_eq!(float("1e400"), None);
        assert_eq!(float("1e-400"), Some(0.0));
    }
}
