//! The profile's TOML (1.1) read into a tree of spanned values, in one
//! pass over the text: no token vector, no map type, a table's entries a
//! `Vec` kept in key order.
//!
//! It takes the place of the toml crate's parser (`DeTable::parse`), and
//! gives the tree that parser gives, span for span (the differential
//! tests below and the `toml` fuzz target check both on every input they
//! see, against the crate): tables' entries sorted by key, as its
//! `BTreeMap` keeps them; a value's span from its first byte to its last,
//! quotes and brackets included; a `[table]`'s span its header, an
//! array of tables' its first header, a table made by a dotted key or a
//! header's path the key's; the root 0..0. A float keeps its text, its
//! underscores taken out; an integer its value, or only its text beyond
//! i64. Date-times are recognised and kept as such, without their value:
//! no profile key takes one.
//!
//! Why not the crate: its parser is several times this module's code in
//! the mips binary, which must stay within its size budget (`scripts/build`
//! prints it), and parsing the profile is on the boot's path
//! (scripts/bench-boot).
//!
//! A refused document gives one error, the first, at the byte where it
//! is found, worded for a person (`config::parse` adds the file, line,
//! column and key). Arrays and inline tables nested deeper than
//! `MAX_DEPTH`, and keys with more parts (`a.b.c`), are refused, so that a
//! hostile file cannot exhaust a board's stack (in the parse, or in
//! dropping the tree).

use std::borrow::Cow;
use std::ops::Range;

use super::Spanned;

/// Arrays and inline tables nested deeper than this, and dotted keys
/// with more parts, are refused.
pub(crate) const MAX_DEPTH: usize = 32;

/// A value of the document and its span.
pub(crate) type Value<'a> = Spanned<Item<'a>>;

/// A key and its span (the key as written, quotes included).
pub(crate) type Key<'a> = Spanned<Cow<'a, str>>;

#[derive(Debug)]
pub(crate) enum Item<'a> {
    String(Cow<'a, str>),
    Integer(Integer<'a>),
    /// The literal without its underscores: `[+-]DIGITS[.DIGITS][(e|E)[+-]DIGITS]`,
    /// or `inf` / `nan` with an optional sign.
    Float(Cow<'a, str>),
    Boolean(bool),
    Datetime,
    Array(Array<'a>),
    Table(Table<'a>),
}

/// A TOML integer: its value, None beyond i64, and its text.
#[derive(Debug)]
pub(crate) struct Integer<'a> {
    pub value: Option<i64>,
    pub text: &'a str,
}

#[derive(Debug, Default)]
pub(crate) struct Array<'a> {
    items: Vec<Value<'a>>,
    /// Made by `[[headers]]`: later headers append to it.
    of_tables: bool,
}

impl<'a> std::ops::Deref for Array<'a> {
    type Target = [Value<'a>];
    fn deref(&self) -> &[Value<'a>] {
        &self.items
    }
}

/// How a table came to be, which decides what may extend it later (the
/// toml crate's `implicit`, `dotted` and `inline` flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Defined by a `[header]` (or the root, or an element of `[[array]]`).
    Header,
    /// Made on the way to a header (`[a.b]` makes `a`); a header may
    /// still define it.
    Implicit,
    /// Made by a dotted key (`a.b = 1` makes `a`).
    Dotted,
    /// `{ ... }`: closed.
    Inline,
}

#[derive(Debug)]
pub(crate) struct Table<'a> {
    /// Sorted by key.
    entries: Vec<(Key<'a>, Value<'a>)>,
    kind: Kind,
}

impl<'a> Table<'a> {
    fn new(kind: Kind) -> Self {
        Table { entries: Vec::new(), kind }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The entries in key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&Key<'a>, &Value<'a>)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub(crate) fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.get_ref().as_ref().cmp(key))
    }

    fn implicit(&self) -> bool {
        matches!(self.kind, Kind::Implicit | Kind::Dotted)
    }
}

impl Item<'_> {
    /// What the value is, for errors.
    fn kind_name(&self) -> &'static str {
        match self {
            Item::String(_) => "a string",
            Item::Integer(_) => "an integer",
            Item::Float(_) => "a float",
            Item::Boolean(_) => "a boolean",
            Item::Datetime => "a date-time",
            Item::Array(a) if a.of_tables => "an array of tables",
            Item::Array(_) => "an array",
            Item::Table(t) if t.kind == Kind::Inline => "an inline table",
            Item::Table(_) => "a table",
        }
    }
}

/// Why the document was refused, and the byte where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Error {
    pub message: String,
    pub at: usize,
}

impl Error {
    pub(crate) fn span(&self) -> Range<usize> {
        self.at..self.at
    }
}

/// Parse a whole document: its root table, span 0..0.
pub(crate) fn parse(text: &str) -> Result<Value<'_>, Error> {
    let mut p = Parser { text, b: text.as_bytes(), pos: 0, depth: 0 };
    let mut doc = Document { root: Table::new(Kind::Header), current: Table::new(Kind::Header), header: None };
    loop {
        p.skip_ws();
        match p.peek() {
            None => break,
            Some(b'\n' | b'\r' | b'#') => {}
            Some(b'[') => {
                doc.finish_table()?;
                let header = p.header()?;
                doc.start_table(header)?;
            }
            Some(_) => {
                let (path, key, value) = p.key_value()?;
                doc.current.put(&path, key, value)?;
            }
        }
        p.end_of_line()?;
    }
    doc.finish_table()?;
    Ok(Spanned::new(0..0, Item::Table(doc.root)))
}

/// A `[header]` or `[[header]]`.
struct Header<'a> {
    path: Vec<Key<'a>>,
    key: Key<'a>,
    span: Range<usize>,
    of_tables: bool,
}

/// What has been read: the root, and the table the lines now go into,
/// which is put in its place when the next header (or the end) comes.
struct Document<'a> {
    root: Table<'a>,
    current: Table<'a>,
    header: Option<Header<'a>>,
}

impl<'a> Document<'a> {
    fn start_table(&mut self, header: Header<'a>) -> Result<(), Error> {
        if !header.of_tables {
            let parent = descend(&mut self.root, &header.path, false)?;
            if let Ok(i) = parent.find(header.key.get_ref()) {
                // A table made on the way to an earlier header may now be
                // defined, with what it already holds; nothing else may.
                if !matches!(parent.entries[i].1.get_ref(), Item::Table(t) if t.kind == Kind::Implicit) {
                    return Err(duplicate(&header.key));
                }
                if let Item::Table(t) = parent.entries.remove(i).1.into_inner() {
                    self.current = t;
                }
            }
        }
        self.current.kind = Kind::Header;
        self.header = Some(header);
        Ok(())
    }

    fn finish_table(&mut self) -> Result<(), Error> {
        let table = std::mem::replace(&mut self.current, Table::new(Kind::Header));
        let Some(header) = self.header.take() else {
            self.root = table;
            return Ok(());
        };
        let value = Spanned::new(header.span.clone(), Item::Table(table));
        let parent = descend(&mut self.root, &header.path, false)?;
        let name = header.key.get_ref();
        if !header.of_tables {
            // `start_table` took out what was there, or refused it.
            return match parent.find(name) {
                Ok(_) => Err(duplicate(&header.key)),
                Err(i) => {
                    parent.entries.insert(i, (header.key, value));
                    Ok(())
                }
            };
        }
        let i = match parent.find(name) {
            Ok(i) => i,
            Err(i) => {
                let array = Array { items: Vec::new(), of_tables: true };
                parent.entries.insert(i, (header.key.clone(), Spanned::new(header.span, Item::Array(array))));
                i
            }
        };
        match parent.entries[i].1.get_mut() {
            Item::Array(a) if a.of_tables => {
                a.items.push(value);
                Ok(())
            }
            _ => Err(duplicate(&header.key)),
        }
    }
}

impl<'a> Table<'a> {
    /// `path.key = value` in this table.
    fn put(&mut self, path: &[Key<'a>], key: Key<'a>, value: Value<'a>) -> Result<(), Error> {
        let dotted = !path.is_empty();
        let parent = descend(self, path, dotted)?;
        if dotted && !parent.implicit() {
            return Err(duplicate(&key));
        }
        match parent.find(key.get_ref()) {
            Ok(_) => Err(duplicate(&key)),
            Err(i) => {
                parent.entries.insert(i, (key, value));
                Ok(())
            }
        }
    }
}

/// The table at `path` under `table`, making what is missing (`dotted`:
/// for a dotted key, else for a header). The rules are TOML's, as the
/// toml crate applies them: an array of tables is entered at its last
/// element; an inline table is closed; a dotted key may not enter a table
/// a header defined.
fn descend<'t, 'a>(mut table: &'t mut Table<'a>, path: &[Key<'a>], dotted: bool) -> Result<&'t mut Table<'a>, Error> {
    for key in path {
        let i = match table.find(key.get_ref()) {
            Ok(i) => i,
            Err(i) => {
                let kind = if dotted { Kind::Dotted } else { Kind::Implicit };
                table.entries.insert(i, (key.clone(), Spanned::new(key.span(), Item::Table(Table::new(kind)))));
                i
            }
        };
        let value = &mut table.entries[i].1;
        match value.get_ref() {
            Item::Array(a) if a.of_tables => {}
            Item::Table(t) if t.kind == Kind::Inline => {
                return Err(Error {
                    message: format!("`{}` is an inline table, which cannot be extended", key.get_ref()),
                    at: key.span().start,
                })
            }
            Item::Table(t) if dotted && !t.implicit() => return Err(duplicate(key)),
            Item::Table(_) => {}
            other => {
                let what = other.kind_name();
                return Err(Error { message: format!("`{}` is {what}, not a table", key.get_ref()), at: key.span().start });
            }
        }
        table = match value.get_mut() {
            // An array of tables is never empty, and holds only tables.
            Item::Array(a) => match a.items.last_mut().map(|v| v.get_mut()) {
                Some(Item::Table(t)) => t,
                _ => return Err(duplicate(key)),
            },
            Item::Table(t) => {
                if dotted {
                    t.kind = Kind::Dotted;
                }
                t
            }
            _ => return Err(duplicate(key)),
        };
    }
    Ok(table)
}

#[cold]
fn duplicate(key: &Key<'_>) -> Error {
    Error { message: format!("duplicate key `{}`", key.get_ref()), at: key.span().start }
}

struct Parser<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    depth: usize,
}

fn is_bare(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-' || c == b'_'
}

/// A character allowed in a comment or a string as it is: a tab, any
/// printable ASCII, anything beyond ASCII.
fn is_text(c: u8) -> bool {
    c == b'\t' || (0x20..0x7f).contains(&c) || c >= 0x80
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn at(&self, s: &[u8]) -> bool {
        self.b[self.pos..].starts_with(s)
    }

    #[cold]
    fn err<T>(&self, at: usize, message: impl Into<String>) -> Result<T, Error> {
        Err(Error { message: message.into(), at })
    }

    /// What is at the cursor, for an error.
    #[cold]
    fn unexpected<T>(&self, expected: &str) -> Result<T, Error> {
        let found = match self.text[self.pos..].chars().next() {
            None => "the end of the file".to_string(),
            Some('\n' | '\r') => "the end of the line".to_string(),
            Some(c) if c.is_control() => format!("{:?}", c),
            Some(c) => format!("`{c}`"),
        };
        self.err(self.pos, format!("expected {expected}, found {found}"))
    }

    fn expect(&mut self, c: u8, expected: &str) -> Result<(), Error> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            self.unexpected(expected)
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    /// A comment, if one is here.
    fn comment(&mut self) -> Result<(), Error> {
        if self.peek() != Some(b'#') {
            return Ok(());
        }
        self.pos += 1;
        while let Some(c) = self.peek() {
            match c {
                b'\n' | b'\r' => break,
                c if is_text(c) => self.pos += 1,
                _ => return self.unexpected("a printable character in the comment"),
            }
        }
        Ok(())
    }

    /// A line break (LF or CRLF), if one is here.
    fn newline(&mut self) -> Result<bool, Error> {
        match self.peek() {
            Some(b'\n') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b'\r') if self.at(b"\r\n") => {
                self.pos += 2;
                Ok(true)
            }
            Some(b'\r') => self.err(self.pos, "a carriage return without a line feed"),
            _ => Ok(false),
        }
    }

    /// Spaces, an optional comment, then the end of the line or file.
    fn end_of_line(&mut self) -> Result<(), Error> {
        self.skip_ws();
        self.comment()?;
        if self.newline()? || self.peek().is_none() {
            Ok(())
        } else {
            self.unexpected("the end of the line")
        }
    }

    /// Spaces, comments and line breaks, inside brackets.
    fn skip_blank(&mut self) -> Result<(), Error> {
        loop {
            self.skip_ws();
            self.comment()?;
            if !self.newline()? {
                return Ok(());
            }
        }
    }

    fn header(&mut self) -> Result<Header<'a>, Error> {
        let start = self.pos;
        self.pos += 1;
        let of_tables = self.peek() == Some(b'[');
        if of_tables {
            self.pos += 1;
        }
        self.skip_ws();
        let (path, key) = self.key_path()?;
        self.skip_ws();
        self.expect(b']', "`]` after the table's name")?;
        if of_tables {
            self.expect(b']', "`]]` after the array of tables' name")?;
        }
        Ok(Header { path, key, span: start..self.pos, of_tables })
    }

    /// `a.b."c"`: the keys before the last, and the last.
    fn key_path(&mut self) -> Result<(Vec<Key<'a>>, Key<'a>), Error> {
        let mut path = Vec::new();
        let mut key = self.key()?;
        loop {
            let save = self.pos;
            self.skip_ws();
            if self.peek() != Some(b'.') {
                self.pos = save;
                return Ok((path, key));
            }
            self.pos += 1;
            self.skip_ws();
            if path.len() + 1 >= MAX_DEPTH {
                return self.err(self.pos, format!("keys nested more than {MAX_DEPTH} deep"));
            }
            path.push(std::mem::replace(&mut key, self.key()?));
        }
    }

    fn key(&mut self) -> Result<Key<'a>, Error> {
        let start = self.pos;
        let name = match self.peek() {
            Some(b'"') if !self.at(b"\"\"\"") => self.basic_string(false)?,
            Some(b'\'') if !self.at(b"'''") => self.literal_string()?,
            Some(c) if is_bare(c) => {
                while self.peek().is_some_and(is_bare) {
                    self.pos += 1;
                }
                Cow::Borrowed(&self.text[start..self.pos])
            }
            _ => return self.unexpected("a key"),
        };
        Ok(Spanned::new(start..self.pos, name))
    }

    fn value(&mut self) -> Result<Value<'a>, Error> {
        let start = self.pos;
        let item = match self.peek() {
            Some(b'"') => Item::String(self.basic_string(self.at(b"\"\"\""))?),
            Some(b'\'') if self.at(b"'''") => Item::String(self.ml_literal_string()?),
            Some(b'\'') => Item::String(self.literal_string()?),
            Some(b'[') => self.nested(Self::array)?,
            Some(b'{') => self.nested(Self::inline_table)?,
            Some(c) if c.is_ascii_alphanumeric() || c == b'+' || c == b'-' => self.scalar()?,
            _ => return self.unexpected("a value"),
        };
        Ok(Spanned::new(start..self.pos, item))
    }

    fn nested(&mut self, f: fn(&mut Self) -> Result<Item<'a>, Error>) -> Result<Item<'a>, Error> {
        if self.depth >= MAX_DEPTH {
            return self.err(self.pos, format!("arrays and inline tables nested more than {MAX_DEPTH} deep"));
        }
        self.depth += 1;
        let item = f(self);
        self.depth -= 1;
        item
    }

    /// The items of a bracketed list, each read by `item`, up to `close`:
    /// over several lines, with comments, and a trailing comma (which
    /// TOML 1.1 allows in inline tables too). `expected` names what may
    /// follow an item, for the error.
    fn list(&mut self, close: u8, expected: &str, mut item: impl FnMut(&mut Self) -> Result<(), Error>) -> Result<(), Error> {
        self.pos += 1;
        loop {
            self.skip_blank()?;
            if self.peek() == Some(close) {
                break;
            }
            item(self)?;
            self.skip_blank()?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => break,
                _ => return self.unexpected(expected),
            }
        }
        self.pos += 1;
        Ok(())
    }

    fn array(&mut self) -> Result<Item<'a>, Error> {
        let mut items = Vec::new();
        self.list(b']', "`,` or `]` in the array", |p| {
            items.push(p.value()?);
            Ok(())
        })?;
        Ok(Item::Array(Array { items, of_tables: false }))
    }

    /// `{ k = v, ... }`.
    fn inline_table(&mut self) -> Result<Item<'a>, Error> {
        let mut table = Table::new(Kind::Inline);
        self.list(b'}', "`,` or `}` in the inline table", |p| {
            let (path, key, value) = p.key_value()?;
            table.put(&path, key, value)
        })?;
        Ok(Item::Table(table))
    }

    /// `a.b = value`: the keys before the last, the last, the value.
    fn key_value(&mut self) -> Result<(Vec<Key<'a>>, Key<'a>, Value<'a>), Error> {
        let (path, key) = self.key_path()?;
        self.skip_ws();
        self.expect(b'=', "`=` after the key")?;
        self.skip_ws();
        Ok((path, key, self.value()?))
    }

    /// `"..."` on one line, or `"""..."""` (`multi`).
    fn basic_string(&mut self, multi: bool) -> Result<Cow<'a, str>, Error> {
        let open = self.pos;
        self.pos += if multi { 3 } else { 1 };
        if multi {
            self.newline()?;
        }
        let mut owned: Option<String> = None;
        let mut run = self.pos;
        loop {
            let Some(c) = self.peek() else {
                return self.err(open, "a string that is not closed");
            };
            match c {
                b'"' if !multi => {
                    let s = self.close_run(owned, run, self.pos);
                    self.pos += 1;
                    return Ok(s);
                }
                b'"' if self.at(b"\"\"\"") => return Ok(self.close_multi(owned, run, b'"')),
                b'\\' => {
                    let out = owned.get_or_insert_with(String::new);
                    out.push_str(&self.text[run..self.pos]);
                    self.escape(out, multi)?;
                    run = self.pos;
                }
                b'\n' | b'\r' if multi => {
                    self.newline()?;
                }
                b'\n' | b'\r' => return self.err(open, "a string that is not closed on its line"),
                c if is_text(c) || c == b'"' => self.pos += 1,
                _ => return self.unexpected("a printable character in the string"),
            }
        }
    }

    /// The string's last run of text added to what was unescaped.
    fn close_run(&self, owned: Option<String>, run: usize, end: usize) -> Cow<'a, str> {
        match owned {
            None => Cow::Borrowed(&self.text[run..end]),
            Some(mut s) => {
                s.push_str(&self.text[run..end]);
                Cow::Owned(s)
            }
        }
    }

    /// The end of a multi-line string at three quotes, taking up to two
    /// more as part of it (`""""` ends with a quote).
    fn close_multi(&mut self, owned: Option<String>, run: usize, quote: u8) -> Cow<'a, str> {
        let mut n = 0;
        while n < 5 && self.b.get(self.pos + n) == Some(&quote) {
            n += 1;
        }
        let end = self.pos + n - 3;
        self.pos += n;
        self.close_run(owned, run, end)
    }

    /// A backslash escape, appended to `out`.
    fn escape(&mut self, out: &mut String, multi: bool) -> Result<(), Error> {
        let at = self.pos;
        self.pos += 1;
        let c = match self.peek() {
            Some(b'b') => '\u{8}',
            Some(b't') => '\t',
            Some(b'n') => '\n',
            Some(b'f') => '\u{c}',
            Some(b'r') => '\r',
            Some(b'e') => '\u{1b}',
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'x') => return self.hex_escape(out, at, 2),
            Some(b'u') => return self.hex_escape(out, at, 4),
            Some(b'U') => return self.hex_escape(out, at, 8),
            Some(b' ' | b'\t' | b'\n' | b'\r') if multi => {
                // A line-ending backslash: it and every space and line
                // break after it are dropped.
                self.skip_ws();
                if !self.newline()? {
                    return self.err(at, "a backslash followed by spaces, not at the end of the line");
                }
                loop {
                    self.skip_ws();
                    if !self.newline()? {
                        return Ok(());
                    }
                }
            }
            _ => {
                let shown: String = self.text[at..].chars().take(2).collect();
                return self.err(at, format!("unknown escape `{shown}`"));
            }
        };
        self.pos += 1;
        out.push(c);
        Ok(())
    }

    fn hex_escape(&mut self, out: &mut String, at: usize, digits: usize) -> Result<(), Error> {
        let hex = self.b.get(self.pos + 1..self.pos + 1 + digits).unwrap_or(&[]);
        let code = if hex.len() == digits && hex.iter().all(u8::is_ascii_hexdigit) {
            std::str::from_utf8(hex).ok().and_then(|h| u32::from_str_radix(h, 16).ok())
        } else {
            None
        };
        let Some(c) = code.and_then(char::from_u32) else {
            let shown: String = self.text[at..].chars().take(2 + digits).collect();
            return self.err(at, format!("`{shown}` is not a Unicode character's escape"));
        };
        self.pos += 1 + digits;
        out.push(c);
        Ok(())
    }

    /// `'...'` on one line.
    fn literal_string(&mut self) -> Result<Cow<'a, str>, Error> {
        let open = self.pos;
        self.pos += 1;
        let start = self.pos;
        loop {
            match self.peek() {
                Some(b'\'') => {
                    self.pos += 1;
                    return Ok(Cow::Borrowed(&self.text[start..self.pos - 1]));
                }
                None | Some(b'\n' | b'\r') => return self.err(open, "a string that is not closed on its line"),
                Some(c) if is_text(c) => self.pos += 1,
                Some(_) => return self.unexpected("a printable character in the string"),
            }
        }
    }

    /// `'''...'''`.
    fn ml_literal_string(&mut self) -> Result<Cow<'a, str>, Error> {
        let open = self.pos;
        self.pos += 3;
        self.newline()?;
        let start = self.pos;
        loop {
            match self.peek() {
                None => return self.err(open, "a string that is not closed"),
                Some(b'\'') if self.at(b"'''") => return Ok(self.close_multi(None, start, b'\'')),
                Some(b'\n' | b'\r') => {
                    self.newline()?;
                }
                Some(c) if is_text(c) || c == b'\'' => self.pos += 1,
                Some(_) => return self.unexpected("a printable character in the string"),
            }
        }
    }

    /// A boolean, a number or a date-time: the run of characters they are
    /// written with, then what it is.
    fn scalar(&mut self) -> Result<Item<'a>, Error> {
        let start = self.pos;
        let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'+' | b'-' | b'.' | b':');
        while self.peek().is_some_and(word) {
            self.pos += 1;
        }
        // A date and a time may be parted by a space.
        if is_date(&self.b[start..self.pos]) && self.peek() == Some(b' ') {
            let after = self.pos + 1;
            let mut end = after;
            while self.b.get(end).is_some_and(|c| word(*c)) {
                end += 1;
            }
            if is_time_offset(&self.b[after..end]) {
                self.pos = end;
            }
        }
        let s = &self.text[start..self.pos];
        match s {
            "true" => return Ok(Item::Boolean(true)),
            "false" => return Ok(Item::Boolean(false)),
            "inf" | "+inf" | "-inf" | "nan" | "+nan" | "-nan" => return Ok(Item::Float(Cow::Borrowed(s))),
            _ => {}
        }
        if is_datetime(s.as_bytes()) {
            return Ok(Item::Datetime);
        }
        if let Some(n) = integer(s) {
            return Ok(Item::Integer(n));
        }
        if is_float(s.as_bytes()) {
            return Ok(Item::Float(if s.contains('_') { Cow::Owned(s.replace('_', "")) } else { Cow::Borrowed(s) }));
        }
        self.err(start, format!("`{s}` is not a value (a string needs quotes)"))
    }
}

/// Digits with single underscores between them, each digit allowed by
/// `digit`; at least one.
fn digits(s: &[u8], digit: fn(&u8) -> bool) -> bool {
    !s.is_empty() && s.split(|c| *c == b'_').all(|part| !part.is_empty() && part.iter().all(digit))
}

/// A TOML integer: decimal with an optional sign and no leading zero, or
/// `0x`, `0o`, `0b` unsigned.
fn integer(s: &str) -> Option<Integer<'_>> {
    let b = s.as_bytes();
    let (radix, body, neg): (u32, &[u8], bool) = match b {
        [b'0', b'x', rest @ ..] => (16, rest, false),
        [b'0', b'o', rest @ ..] => (8, rest, false),
        [b'0', b'b', rest @ ..] => (2, rest, false),
        [b'-', rest @ ..] => (10, rest, true),
        [b'+', rest @ ..] => (10, rest, false),
        _ => (10, b, false),
    };
    let digit: fn(&u8) -> bool = match radix {
        16 => u8::is_ascii_hexdigit,
        8 => |c| (b'0'..=b'7').contains(c),
        2 => |c| *c == b'0' || *c == b'1',
        _ => u8::is_ascii_digit,
    };
    if !digits(body, digit) || (radix == 10 && body.len() > 1 && body[0] == b'0') {
        return None;
    }
    let mut value: Option<i64> = Some(0);
    for c in body.iter().filter(|c| **c != b'_') {
        let d = i64::from((*c as char).to_digit(radix)?);
        value = value.and_then(|v| v.checked_mul(i64::from(radix))).and_then(|v| if neg { v.checked_sub(d) } else { v.checked_add(d) });
    }
    Some(Integer { value, text: s })
}

/// `[+-]INT(.DIGITS)?([eE][+-]?DIGITS)?` with a fraction or an exponent,
/// INT without a leading zero.
fn is_float(s: &[u8]) -> bool {
    let s = match s {
        [b'+' | b'-', rest @ ..] => rest,
        _ => s,
    };
    let (mantissa, exp) = match s.iter().position(|c| *c == b'e' || *c == b'E') {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let (int, frac) = match mantissa.iter().position(|c| *c == b'.') {
        Some(i) => (&mantissa[..i], Some(&mantissa[i + 1..])),
        None => (mantissa, None),
    };
    let int_ok = digits(int, u8::is_ascii_digit) && !(int.len() > 1 && int[0] == b'0');
    let frac_ok = frac.is_none_or(|f| digits(f, u8::is_ascii_digit));
    let exp_ok = exp.is_none_or(|e| {
        let e = match e {
            [b'+' | b'-', rest @ ..] => rest,
            _ => e,
        };
        digits(e, u8::is_ascii_digit)
    });
    int_ok && frac_ok && exp_ok && (frac.is_some() || exp.is_some())
}

fn num(s: &[u8]) -> Option<u32> {
    if s.iter().all(u8::is_ascii_digit) {
        Some(s.iter().fold(0, |n, c| n * 10 + u32::from(c - b'0')))
    } else {
        None
    }
}

/// `YYYY-MM-DD`, a real day.
fn is_date(s: &[u8]) -> bool {
    if s.len() != 10 || s[4] != b'-' || s[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (num(&s[..4]), num(&s[5..7]), num(&s[8..])) else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        1..=12 => 31,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `HH:MM[:SS[.FRAC]]`.
fn is_time(s: &[u8]) -> bool {
    if s.len() < 5 || s[2] != b':' {
        return false;
    }
    let (Some(h), Some(m)) = (num(&s[..2]), num(&s[3..5])) else {
        return false;
    };
    if h > 23 || m > 59 {
        return false;
    }
    match &s[5..] {
        [] => true,
        [b':', a, b, rest @ ..] => {
            let sec_ok = num(&[*a, *b]).is_some_and(|sec| sec <= 60);
            sec_ok
                && match rest {
                    [] => true,
                    [b'.', frac @ ..] => !frac.is_empty() && frac.iter().all(u8::is_ascii_digit),
                    _ => false,
                }
        }
        _ => false,
    }
}

/// A time with an optional offset: `Z`, or `+HH:MM` / `-HH:MM`.
fn is_time_offset(s: &[u8]) -> bool {
    if let Some(t) = s.strip_suffix(b"Z").or_else(|| s.strip_suffix(b"z")) {
        return is_time(t);
    }
    if s.len() > 6 && matches!(s[s.len() - 6], b'+' | b'-') && s[s.len() - 3] == b':' {
        let off = &s[s.len() - 5..];
        let ok = num(&off[..2]).is_some_and(|h| h <= 23) && num(&off[3..]).is_some_and(|m| m <= 59);
        return ok && is_time(&s[..s.len() - 6]);
    }
    is_time(s)
}

/// A date, a date and a time (`T` or a space between, an optional
/// offset), or a time alone.
fn is_datetime(s: &[u8]) -> bool {
    if s.len() > 10 && matches!(s[10], b'T' | b't' | b' ') {
        return is_date(&s[..10]) && is_time_offset(&s[11..]);
    }
    is_date(s) || is_time(s)
}

#[cfg(any(test, feature = "fuzz"))]
pub(crate) mod reference;

#[cfg(test)]
mod tests;
