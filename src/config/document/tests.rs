//! The parser against the toml crate (`reference`): the same tree, span
//! for span, for every profile in the tree and for TOML's corners; and
//! both refusing what TOML refuses.

use super::reference::{differ, ours};
use super::{parse, MAX_DEPTH};

/// Every profile the tree ships or tests with.
#[test]
fn every_profile_in_the_tree_parses_as_toml_parses_it() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut n = 0;
    for dir in ["board", "tests/profiles", "buildroot", "tests/fuzz/seeds/profile", "tests/fuzz/seeds/plan"] {
        let Ok(entries) = std::fs::read_dir(format!("{root}/{dir}")) else { continue };
        for e in entries.flatten() {
            let path = e.path();
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            if path.extension().is_some_and(|x| x == "toml") || dir.contains("seeds") {
                if let Some(d) = differ(&text) {
                    panic!("{}: {d}", path.display());
                }
                n += 1;
            }
        }
    }
    assert!(n >= 20, "only {n} profiles found");
}

/// TOML that is valid: each parses, and as toml parses it.
const VALID: &[&str] = &[
    "",
    "\n\n# only a comment\n",
    "a = 1\r\nb = 2\r\n",
    "a = 1 # comment\nb=2#c",
    "a = \"x\\t\\n\\\"\\\\\\u00e9\\U0001F600\\e\\x41\"",
    "a = 'C:\\path'\nb = '''\nline\n  two'''\nc = '''''quoted'''''",
    "a = \"\"\"\nfirst\n  second\"\"\"\nb = \"\"\"one \\\n   two \\\n\n  three\"\"\"\nc = \"\"\"\"\"\"\"\nd = \"\"\"a\"\"b\"\"\"",
    "a = +1\nb = -0\nc = 1_000\nd = 0xdead_BEEF\ne = 0o755\nf = 0b1010\ng = 9223372036854775807\nh = -9223372036854775808",
    "big = 9223372036854775808\nhex = 0xffffffffffffffff",
    "a = 1.5\nb = -2e-3\nc = 6.626E+34\nd = 1_000.000_1\ne = inf\nf = -nan\ng = +inf\nh = 0.0\ni = 0e0",
    "a = true\nb = false",
    "d1 = 1979-05-27T07:32:00Z\nd2 = 1979-05-27 07:32:00.999-07:00\nd3 = 1979-05-27\nd4 = 07:32\nd5 = 07:32:00.5\nd6 = 2000-02-29t00:00z",
    "a = [1, 'two', [3], {x = 4}]\nb = [\n  1, # one\n  2,\n]\nc = []\nd = [ ]",
    "t = { a = 1, b.c = 2, \"q k\" = 3 }\nu = {}\nv = {\n  a = 1,\n  b = 2,\n}",
    "[a]\nx = 1\n[a.b]\ny = 2\n[c . \"d\" . 'e']\nz = 3",
    "[a.b.c]\n[a]\nx = 1\n[a.b]\ny = 2",
    "[[arr]]\nx = 1\n[[arr]]\nx = 2\n[arr.sub]\ny = 3\n[[arr.list]]\nz = 4",
    "a.b.c = 1\na.b.d = 2\na.e = 3\n[x]\ny.z = 1",
    "[fruit]\napple.color = 'red'\napple.taste.sweet = true\n[fruit.apple.texture]\nsmooth = true",
    "1 = 'digits'\n-_ = 'dash'\n\"\" = 'empty'\n\"e\" . '' = 1",
    "[board]\nname = \"bubba2\" # the board\n[[interface]]\nname = \"eth0\"\nrole = \"lan\"\naddress = [\"192.168.10.1/24\"]\n",
    "a = \"é ✓ 😀\"\n# é ✓\nb = '\tx'",
];

/// TOML that is not: each refused, by both.
const INVALID: &[&str] = &[
    "a",
    "a =",
    "a = = 3",
    "= 1",
    "a = 1 b = 2",
    "a = 1\na = 2",
    "a = \"open",
    "a = \"two\nlines\"",
    "a = 'open",
    "a = \"\"\"never closed",
    "a = '''never",
    "a = \"\\q\"",
    "a = \"\\uD800\"",
    "a = \"\\x4\"",
    "a = \"bad\u{1}char\"",
    "a = \"\"\"x \\ y\"\"\"",
    "a = 01",
    "a = 1__0",
    "a = _1",
    "a = 1_",
    "a = 0x",
    "a = 6666)666$",
    "a = +0x1",
    "a = -0b1",
    "a = 1.",
    "a = .5",
    "a = 1.e5",
    "a = 1e",
    "a = 00.1",
    "a = True",
    "a = nan1",
    "a = 1979-13-01",
    "a = 1979-02-29",
    "a = 24:00",
    "a = 07:32Z",
    "a = [1 2]",
    "a = [1,,2]",
    "a = [,]",
    "a = {a = 1 b = 2}",
    "a = {a = 1, a = 2}",
    "a = {x = 1}\na.y = 2",
    "a = {x = 1}\n[a.b]",
    "[a]\n[a]",
    "[a]\nb = 1\n[a.b]",
    "a = 1\n[a]",
    "a.b = 1\n[a]",
    "[a]\nb.c = 1\n[a.b]",
    "[[a]]\n[a]",
    "[a]\n[[a]]",
    "a = [1]\n[[a]]",
    "[a]\nx = 1\n[x.y]\na.x.z = 1\n[a.x]",
    "[a",
    "[[a]",
    "[[a] ]",
    "[]",
    "[a.]",
    "a..b = 1",
    "a = 1\r",
    "a = 1 # bad \u{7f} comment",
    "a = 1 # bad \u{1} comment",
    "\"\"\"key\"\"\" = 1",
    // toml 1.2 accepts these two (a line break and a comment where TOML
    // 1.1 allows spaces only); ours refuses them, as the ABNF does.
    "a = { b # c\n= 1 }",
    "a = { b = # c\n1 }",
];

#[test]
fn valid_toml_parses_as_toml_parses_it() {
    let mut failed = Vec::new();
    for text in VALID {
        if let Err(e) = ours(text) {
            failed.push(format!("refused {text:?}: {e:?}"));
        } else if let Some(d) = differ(text) {
            failed.push(format!("{text:?}: {d}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn invalid_toml_is_refused_by_both() {
    let mut failed = Vec::new();
    for text in INVALID {
        match ours(text) {
            Ok(tree) => failed.push(format!("accepted {text:?}: {tree}")),
            Err(e) => assert!(e.at <= text.len() && !e.message.is_empty(), "{text:?}: {e:?}"),
        }
        if let Some(d) = differ(text) {
            failed.push(format!("{text:?}: {d}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// Errors point at what is wrong.
#[test]
fn errors_are_placed_at_the_fault() {
    for (text, at, words) in [
        ("a = = 3", 4, "expected a value, found `=`"),
        ("a = 1\na = 2", 6, "duplicate key `a`"),
        ("a = \"open", 4, "not closed"),
        ("x = 1\na = 01", 10, "`01` is not a value"),
        ("[a]\n[a]", 5, "duplicate key `a`"),
        ("a = [1 2]", 7, "`,` or `]`"),
        ("a = \"\\q\"", 5, "unknown escape `\\q`"),
    ] {
        let e = parse(text).unwrap_err();
        assert_eq!(e.at, at, "{text:?}: {e:?}");
        assert!(e.message.contains(words), "{text:?}: {e:?}");
    }
}

/// Nesting is bounded: a hostile file cannot exhaust the stack.
#[test]
fn nesting_deeper_than_the_limit_is_refused() {
    let ok = format!("a = {}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
    assert!(parse(&ok).is_ok());
    let deep = format!("a = {}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
    assert!(parse(&deep).unwrap_err().message.contains("nested more than"));
    let hostile = format!("a = {}", "{b = ".repeat(100_000));
    assert!(parse(&hostile).is_err());
    // Dotted keys and headers too: a tree that deep would also overflow
    // the stack as it is dropped.
    let path = |n: usize| vec!["k"; n].join(".");
    assert!(parse(&format!("{} = 1", path(MAX_DEPTH))).is_ok());
    for text in [format!("{} = 1", path(MAX_DEPTH + 1)), format!("[{}]", path(MAX_DEPTH + 1)), format!("{} = 1", path(500_000))] {
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("nested more than"), "{e:?}");
    }
}
