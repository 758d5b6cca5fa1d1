//! The profile decoder: the model built by hand from the parsed document
//! (`document`).
//!
//! `document` parses the text; each model type says in a short `impl Decode`
//! which keys it has and how each is read; this module holds what they
//! share. It replaces serde's derived code, for size: the derive gave each
//! struct a visitor, a field identifier and an enum of its fields, and each
//! (type, visitor) pair of the model its own copy of the deserializer's
//! paths, which is far more code than this module (`scripts/build` prints
//! the binary's size). The table lookup, the kind checks and the error
//! wording are plain functions that every type calls; what is generic is
//! only the call to each value's own `decode`.
//!
//! Errors are worded as serde words them (`unknown field`, `missing
//! field`, `invalid type: ..., expected ...`, `unknown variant`), so that
//! a profile's errors read as before. Each gets the span of the value (or,
//! for an unknown field, of the key; for a missing one, of its table) it
//! is about, and collects the key path (`interface[1].name`) as it
//! unwinds through the tables and arrays above it.
//!
//! What a profile holds: tables as structs (unknown keys refused) and as
//! the sysctl maps (string keys), arrays as `List` or `heapless::Vec` (at most
//! their capacity), enums written as strings, integers, floats (for the load
//! limits only), booleans and strings. An absent key is `None` or the
//! field's default. TOML date-times are refused, like any other value of
//! a kind the model does not expect.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use super::document::{Integer, Item, Table};
use super::types::ParseError;
use super::Spanned;

pub(super) use super::document::Value;

/// A model type read from one value of the document.
pub(super) trait Decode: Sized {
    fn decode(v: &Value<'_>) -> Result<Self, Error>;

    /// Decode into `slot`, which holds the type's default: for the large
    /// members (`boxed`), filled in their box instead of built on the
    /// stack and moved there.
    fn decode_into(slot: &mut Self, v: &Value<'_>) -> Result<(), Error> {
        *slot = Self::decode(v)?;
        Ok(())
    }
}

/// A decoding error, where it is, and the key path to it. Boxed: every
/// `Result` the decoders move around carries one pointer instead of the
/// whole error.
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
    /// An error with this message, not yet placed.
    #[cold]
    pub(super) fn msg(message: String) -> Error {
        Error(Box::new(Inner { message, span: None, rev_path: Vec::new() }))
    }

    /// An error worded by a value's `Display`.
    #[cold]
    pub(super) fn custom(e: &dyn fmt::Display) -> Error {
        Error::msg(e.to_string())
    }

    /// A newtype's `ParseError`, taken (and dropped) out of line.
    #[cold]
    #[inline(never)]
    pub(super) fn parse(e: ParseError) -> Error {
        Error::custom(&e)
    }

    /// Attach `span` unless a deeper value already gave one.
    fn at(mut self, span: Range<usize>) -> Error {
        if self.0.span.is_none() {
            self.0.span = Some(span);
        }
        self
    }

    fn under(mut self, seg: Segment) -> Error {
        self.0.rev_path.push(seg);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// A value's error, placed at the value and under its key.
#[cold]
#[inline(never)]
fn under_key(e: Error, v: &Value<'_>, key: &str) -> Error {
    e.at(v.span()).under(Segment::Key(key.to_string()))
}

/// An array item's error, placed at the item and under its index.
#[cold]
#[inline(never)]
fn under_index(e: Error, v: &Value<'_>, i: usize) -> Error {
    e.at(v.span()).under(Segment::Index(i))
}

/// Decode the whole document as a `T`. Out of line, like the parser and
/// the validation (`config::parse`): inlined together, their frames add up
/// on the stack instead of taking turns.
#[inline(never)]
pub(super) fn document<T: Decode>(doc: &Value<'_>) -> Result<T, Error> {
    T::decode(doc).map_err(|e| e.at(doc.span()))
}

/// What a value is, for `invalid type` errors, as serde words it. A float
/// is named without its value: printing one would link core's float
/// formatting into the binary.
struct Shown<'a>(&'a Item<'a>);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Item::String(s) => write!(f, "string {s:?}"),
            Item::Integer(Integer { value, .. }) => match value {
                Some(i) => write!(f, "integer `{i}`"),
                None => f.write_str("integer"),
            },
            Item::Float(_) => f.write_str("floating-point number"),
            Item::Boolean(b) => write!(f, "boolean `{b}`"),
            Item::Datetime => f.write_str("date-time"),
            Item::Array(_) => f.write_str("sequence"),
            Item::Table(_) => f.write_str("map"),
        }
    }
}

/// `invalid type`: a value of another kind than `expected`.
#[cold]
pub(super) fn wrong(v: &Value<'_>, expected: &dyn fmt::Display) -> Error {
    Error::msg(format!("invalid type: {}, expected {expected}", Shown(v.get_ref())))
}

/// The string in `v`.
pub(super) fn str<'a>(v: &'a Value<'_>, expected: &dyn fmt::Display) -> Result<&'a str, Error> {
    match v.get_ref() {
        Item::String(s) => Ok(s),
        _ => Err(wrong(v, expected)),
    }
}

/// The integer in `v`.
pub(super) fn int(v: &Value<'_>, expected: &dyn fmt::Display) -> Result<i64, Error> {
    match v.get_ref() {
        Item::Integer(n) => n.value.ok_or_else(|| Error::msg(format!("integer {} is too large", n.text))),
        _ => Err(wrong(v, expected)),
    }
}

/// An integer in `lo..=hi`; the error names `what` and the range.
pub(super) fn int_in_range(v: &Value<'_>, lo: i64, hi: i64, what: &str) -> Result<i64, Error> {
    let n = int(v, &format_args!("an integer from {lo} to {hi}"))?;
    if (lo..=hi).contains(&n) {
        Ok(n)
    } else {
        Err(Error::msg(format!("{what} {n} is out of range ({lo} to {hi})")))
    }
}

/// An unsigned integer of at most `max`, the type named `name` (serde's
/// wording for its primitive types).
fn uint(v: &Value<'_>, max: u64, name: &str) -> Result<u64, Error> {
    let n = int(v, &name)?;
    match u64::try_from(n) {
        Ok(u) if u <= max => Ok(u),
        _ => Err(Error::msg(format!("invalid value: integer `{n}`, expected {name}"))),
    }
}

/// A value read from a string through `FromStr`; `expected` names it in a
/// wrong-kind error.
pub(super) fn parsed<T: FromStr<Err = ParseError>>(v: &Value<'_>, expected: &str) -> Result<T, Error> {
    str(v, &expected)?.parse().map_err(Error::parse)
}

/// `Decode` through `FromStr`, from a string; `$what` names the type in a
/// wrong-kind error.
macro_rules! decode_from_str {
    ($t:ty, $what:literal) => {
        impl $crate::config::decode::Decode for $t {
            fn decode(v: &$crate::config::decode::Value<'_>) -> Result<Self, $crate::config::decode::Error> {
                $crate::config::decode::parsed(v, $what)
            }
        }
    };
}
pub(super) use decode_from_str;

/// Which of `names` the string in `v` is; `what` (`enum Role`) names the
/// enum in a wrong-kind error.
pub(super) fn variant(v: &Value<'_>, names: &'static [&'static str], what: &str) -> Result<usize, Error> {
    let s = str(v, &what)?;
    names.iter().position(|n| *n == s).ok_or_else(|| unknown("variant", s, names))
}

/// `Decode` for a unit-only enum written as a string: each variant and its
/// name in the profile.
macro_rules! decode_enum {
    ($t:ident { $($name:literal => $variant:ident),+ $(,)? }) => {
        impl $crate::config::decode::Decode for $t {
            fn decode(v: &$crate::config::decode::Value<'_>) -> Result<Self, $crate::config::decode::Error> {
                const NAMES: &[&str] = &[$($name),+];
                const ALL: &[$t] = &[$($t::$variant),+];
                $crate::config::decode::variant(v, NAMES, concat!("enum ", stringify!($t))).map(|i| ALL[i])
            }
        }
    };
}
pub(super) use decode_enum;

/// serde's `unknown field` and `unknown variant`.
#[cold]
fn unknown(kind: &str, name: &str, names: &[&str]) -> Error {
    let mut m = format!("unknown {kind} `{name}`, ");
    match names {
        [] => m.push_str(&format!("there are no {kind}s")),
        [a] => m.push_str(&format!("expected `{a}`")),
        [a, b] => m.push_str(&format!("expected `{a}` or `{b}`")),
        _ => {
            m.push_str("expected one of ");
            for (i, n) in names.iter().enumerate() {
                if i > 0 {
                    m.push_str(", ");
                }
                m.push_str(&format!("`{n}`"));
            }
        }
    }
    Error::msg(m)
}

/// A table read as a struct: its keys checked against the struct's
/// fields, then each field taken by name.
pub(super) struct Fields<'a> {
    table: &'a Table<'a>,
    span: Range<usize>,
    names: &'static [&'static str],
}

impl<'a> Fields<'a> {
    /// The table in `v`, every key of which must be one of `names`;
    /// `what` (`struct Interface`) names the struct in a wrong-kind error.
    pub(super) fn new(v: &'a Value<'a>, what: &str, names: &'static [&'static str]) -> Result<Fields<'a>, Error> {
        let Item::Table(table) = v.get_ref() else {
            return Err(wrong(v, &what));
        };
        for (k, _) in table.iter() {
            let key: &str = k.get_ref();
            if !names.contains(&key) {
                return Err(unknown("field", key, names).at(k.span()).under(Segment::Key(key.to_string())));
            }
        }
        Ok(Fields { table, span: v.span(), names })
    }

    /// Out of line: the one table lookup every field shares.
    #[inline(never)]
    fn get(&self, name: &'static str) -> Option<&'a Value<'a>> {
        debug_assert!(self.names.contains(&name), "{name} is not among the fields");
        self.table.get(name)
    }

    /// A field that must be there.
    pub(super) fn req<T: Decode>(&self, name: &'static str) -> Result<T, Error> {
        match self.get(name) {
            Some(v) => T::decode(v).map_err(|e| under_key(e, v, name)),
            None => Err(self.missing(name)),
        }
    }

    /// A field that may be absent.
    pub(super) fn opt<T: Decode>(&self, name: &'static str) -> Result<Option<T>, Error> {
        match self.get(name) {
            Some(v) => T::decode(v).map(Some).map_err(|e| under_key(e, v, name)),
            None => Ok(None),
        }
    }

    /// A field that is `default` when absent.
    pub(super) fn or<T: Decode>(&self, name: &'static str, default: T) -> Result<T, Error> {
        match self.get(name) {
            Some(v) => T::decode(v).map_err(|e| under_key(e, v, name)),
            None => Ok(default),
        }
    }

    /// A field that is its type's default when absent.
    pub(super) fn or_default<T: Decode + Default>(&self, name: &'static str) -> Result<T, Error> {
        match self.get(name) {
            Some(v) => T::decode(v).map_err(|e| under_key(e, v, name)),
            None => Ok(T::default()),
        }
    }

    /// A field decoded into `slot` (`Decode::decode_into`), which keeps
    /// its default when the field is absent.
    pub(super) fn fill<T: Decode>(&self, name: &'static str, slot: &mut T) -> Result<(), Error> {
        match self.get(name) {
            Some(v) => T::decode_into(slot, v).map_err(|e| under_key(e, v, name)),
            None => Ok(()),
        }
    }

    /// `missing field`, at the table, under the field's name.
    #[cold]
    fn missing(&self, name: &str) -> Error {
        Error::msg(format!("missing field `{name}`")).at(self.span.clone()).under(Segment::Key(name.to_string()))
    }
}

/// A large member (a section or a list holding its capacity inline),
/// decoded in a frame of its own and into its box (`Decode::decode_into`),
/// its type's default when absent: see `Profile` for why.
#[inline(never)]
pub(super) fn boxed<T: Decode + Default>(f: &Fields<'_>, name: &'static str) -> Result<Box<T>, Error> {
    let mut out = Box::<T>::default();
    f.fill(name, &mut *out)?;
    Ok(out)
}

/// `boxed` for an optional section.
#[inline(never)]
pub(super) fn boxed_some<T: Decode>(f: &Fields<'_>, name: &'static str) -> Result<Option<Box<T>>, Error> {
    f.opt(name).map(|t| t.map(Box::new))
}

/// `{len} entries; at most {cap} are allowed`.
#[cold]
fn too_many(len: usize, cap: usize) -> Error {
    Error::msg(format!("{len} entries; at most {cap} are allowed"))
}

/// The items of the array in `v`, at most `cap` of them.
fn items<'a>(v: &'a Value<'a>, cap: usize) -> Result<&'a [Value<'a>], Error> {
    match v.get_ref() {
        Item::Array(a) if a.len() > cap => Err(too_many(a.len(), cap)),
        Item::Array(a) => Ok(&a[..]),
        _ => Err(wrong(v, &"a sequence")),
    }
}

/// The entries of the table in `v`, at most `cap` of them.
fn entries<'a>(v: &'a Value<'a>, cap: usize) -> Result<&'a Table<'a>, Error> {
    match v.get_ref() {
        Item::Table(t) if t.len() > cap => Err(too_many(t.len(), cap)),
        Item::Table(t) => Ok(t),
        _ => Err(wrong(v, &"a map")),
    }
}

/// Each of `items` decoded, in order, to `push`; an item's error under
/// its index.
fn decode_each<T: Decode>(items: &[Value<'_>], mut push: impl FnMut(T)) -> Result<(), Error> {
    for (i, item) in items.iter().enumerate() {
        push(T::decode(item).map_err(|e| under_index(e, item, i))?);
    }
    Ok(())
}

/// The items of the array in `v` pushed onto `out`, which is empty.
fn push_items<T: Decode, const N: usize>(out: &mut heapless::Vec<T, N>, v: &Value<'_>) -> Result<(), Error> {
    // Cannot fail: `items` checked the length.
    decode_each(items(v, N)?, |t| {
        let _ = out.push(t);
    })
}

impl<T: Decode, const N: usize> Decode for super::List<T, N> {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let items = items(v, N)?;
        let mut out = Vec::with_capacity(items.len());
        decode_each(items, |t| out.push(t))?;
        Ok(super::List::new(out))
    }
}

impl<T: Decode, const N: usize> Decode for heapless::Vec<T, N> {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let mut out = heapless::Vec::new();
        push_items(&mut out, v)?;
        Ok(out)
    }

    fn decode_into(slot: &mut Self, v: &Value<'_>) -> Result<(), Error> {
        push_items(slot, v)
    }
}

/// A map with string keys (`[sysctl.set]`): a key's error is at the key,
/// a value's under it.
impl<K: FromStr<Err = ParseError> + Eq, V: Decode, const N: usize> Decode for heapless::LinearMap<K, V, N> {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let mut out = heapless::LinearMap::new();
        for (k, item) in entries(v, N)?.iter() {
            let key: K = k.get_ref().parse().map_err(|e| Error::parse(e).at(k.span()).under(Segment::Key(k.get_ref().to_string())))?;
            let value = V::decode(item).map_err(|e| under_key(e, item, k.get_ref()))?;
            // Cannot fail: `entries` checked the length.
            let _ = out.insert(key, value);
        }
        Ok(out)
    }
}

/// A string of at most `max` bytes, as serde words heapless's strings.
fn short_str<'a>(v: &'a Value<'_>, max: usize) -> Result<&'a str, Error> {
    let s = str(v, &format_args!("a string no more than {max} bytes long"))?;
    if s.len() > max {
        return Err(Error::msg(format!("invalid length {}, expected a string no more than {max} bytes long", s.len())));
    }
    Ok(s)
}

impl<const N: usize> Decode for heapless::String<N> {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        let mut out = heapless::String::new();
        // Cannot fail: `short_str` checked the length.
        let _ = out.push_str(short_str(v, N)?);
        Ok(out)
    }
}

impl<T: Decode> Decode for Spanned<T> {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        T::decode(v).map(|t| Spanned::new(v.span(), t))
    }
}

impl Decode for bool {
    fn decode(v: &Value<'_>) -> Result<Self, Error> {
        match v.get_ref() {
            Item::Boolean(b) => Ok(*b),
            _ => Err(wrong(v, &"a boolean")),
        }
    }
}

/// Unsigned integers, worded as serde words its primitives (`u32`).
macro_rules! decode_uint {
    ($($t:ident)+) => {$(
        impl Decode for $t {
            fn decode(v: &Value<'_>) -> Result<Self, Error> {
                uint(v, $t::MAX as u64, stringify!($t)).map(|n| n as $t)
            }
        }
    )+};
}
decode_uint!(u8 u16 u32 u64);

/// Addresses, worded as serde words them.
macro_rules! decode_addr {
    ($($t:ty, $what:literal;)+) => {$(
        impl Decode for $t {
            fn decode(v: &Value<'_>) -> Result<Self, Error> {
                str(v, &$what)?.parse().map_err(|e| Error::custom(&e))
            }
        }
    )+};
}
decode_addr! {
    std::net::IpAddr, "IP address";
    std::net::Ipv4Addr, "IPv4 address";
    std::net::Ipv6Addr, "IPv6 address";
}

/// A float or an integer as a float (the load limits); `expected` names
/// the type in a wrong-kind error.
pub(super) fn float_or_int(v: &Value<'_>, expected: &str) -> Result<f64, Error> {
    match v.get_ref() {
        Item::Float(x) => float(x).ok_or_else(|| Error::msg(format!("float {x} is out of range"))),
        _ => int(v, &expected).map(|n| n as f64),
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
/// all, would link its code and its tables into the binary.
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

#[cfg(test)]
mod tests {
    use super::{float, unknown};
    use crate::config::parse_bytes;

    #[test]
    fn unknown_names_are_worded_as_serde_words_them() {
        let names = ["a", "b", "c"];
        assert_eq!(unknown("field", "x", &names[..0]).message, "unknown field `x`, there are no fields");
        assert_eq!(unknown("variant", "x", &names[..1]).message, "unknown variant `x`, expected `a`");
        assert_eq!(unknown("field", "x", &names[..2]).message, "unknown field `x`, expected `a` or `b`");
        assert_eq!(unknown("field", "x", &names).message, "unknown field `x`, expected one of `a`, `b`, `c`");
    }

    /// A list or a map longer than its capacity: its real length, at the
    /// list, before any of its entries is read.
    #[test]
    fn too_many_entries_give_the_length_and_the_capacity() {
        let head = "[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n";
        let ten: String = (0..10).map(|i| format!("[[interface]]\nname = \"a{i}\"\n")).collect();
        let e = parse_bytes("t.toml", format!("{head}{ten}").as_bytes()).unwrap_err();
        assert_eq!((e.line, e.column, e.key.as_str(), e.message.as_str()), (5, 1, "interface", "10 entries; at most 8 are allowed"));
        let sysctls: String = (0..33).map(|i| format!("\"vm.k{i}\" = 1\n")).collect();
        let e = parse_bytes("t.toml", format!("{head}[sysctl.set]\n{sysctls}").as_bytes()).unwrap_err();
        assert_eq!((e.line, e.column, e.key.as_str(), e.message.as_str()), (5, 1, "sysctl.set", "33 entries; at most 32 are allowed"));
        let e = parse_bytes("t.toml", format!("{head}[nfs]\nversions = [\"3\", \"4\", \"4.1\", \"4.2\", \"9\"]\n").as_bytes()).unwrap_err();
        assert_eq!((e.key.as_str(), e.message.as_str()), ("nfs.versions", "5 entries; at most 4 are allowed"));
    }

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
