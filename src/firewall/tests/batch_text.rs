//! The golden form of the netlink emitter's output: one batch as text, a
//! line per message (its type, family and flags), then its attributes by
//! their names in include/uapi/linux/netfilter/nf_tables.h, nested ones
//! in braces, values in hex (strings quoted). The names come from the
//! header's enums, written out here apart from the encoder's constants,
//! so that a wrong constant shows as a wrong name. The elements of a set
//! are numbered nests, not attributes: `[1]`, `[2]`, ...

use crate::sys::nftnl::Order;

/// An attribute space: the prefix of its names, and its names by number
/// (enum nft_*_attributes, from UNSPEC).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Space {
    Table,
    Chain,
    Hook,
    Rule,
    List,
    Expr,
    /// The data of the expression named so.
    ExprData(&'static str),
    Data,
    Verdict,
    Set,
    SetDesc,
    SetElemList,
    /// A set's elements: numbered nests.
    Elements,
    SetElem,
    Flowtable,
    FlowtableHook,
    Devices,
}

fn names(space: Space) -> (&'static str, &'static [&'static str]) {
    match space {
        Space::Table => ("NFTA_TABLE_", &["UNSPEC", "NAME", "FLAGS", "USE", "HANDLE", "PAD", "USERDATA", "OWNER"]),
        Space::Chain => (
            "NFTA_CHAIN_",
            &["UNSPEC", "TABLE", "HANDLE", "NAME", "HOOK", "POLICY", "USE", "TYPE", "COUNTERS", "PAD", "FLAGS", "ID", "USERDATA"],
        ),
        Space::Hook => ("NFTA_HOOK_", &["UNSPEC", "HOOKNUM", "PRIORITY", "DEV", "DEVS"]),
        Space::Rule => ("NFTA_RULE_", &["UNSPEC", "TABLE", "CHAIN", "HANDLE", "EXPRESSIONS", "COMPAT", "POSITION", "USERDATA"]),
        Space::List => ("NFTA_LIST_", &["UNSPEC", "ELEM"]),
        Space::Expr => ("NFTA_EXPR_", &["UNSPEC", "NAME", "DATA"]),
        Space::ExprData(name) => match name {
            "meta" => ("NFTA_META_", &["UNSPEC", "DREG", "KEY", "SREG"]),
            "ct" => ("NFTA_CT_", &["UNSPEC", "DREG", "KEY", "DIRECTION", "SREG"]),
            "rt" => ("NFTA_RT_", &["UNSPEC", "DREG", "KEY"]),
            "cmp" => ("NFTA_CMP_", &["UNSPEC", "SREG", "OP", "DATA"]),
            "payload" => ("NFTA_PAYLOAD_", &["UNSPEC", "DREG", "BASE", "OFFSET", "LEN", "SREG"]),
            "bitwise" => ("NFTA_BITWISE_", &["UNSPEC", "SREG", "DREG", "LEN", "MASK", "XOR", "OP", "DATA"]),
            "lookup" => ("NFTA_LOOKUP_", &["UNSPEC", "SET", "SREG", "DREG", "SET_ID", "FLAGS"]),
            "immediate" => ("NFTA_IMMEDIATE_", &["UNSPEC", "DREG", "DATA"]),
            "fib" => ("NFTA_FIB_", &["UNSPEC", "DREG", "RESULT", "FLAGS"]),
            "exthdr" => ("NFTA_EXTHDR_", &["UNSPEC", "DREG", "TYPE", "OFFSET", "LEN", "FLAGS", "OP", "SREG"]),
            "byteorder" => ("NFTA_BYTEORDER_", &["UNSPEC", "SREG", "DREG", "OP", "LEN", "SIZE"]),
            "limit" => ("NFTA_LIMIT_", &["UNSPEC", "RATE", "UNIT", "BURST", "TYPE", "FLAGS"]),
            "log" => ("NFTA_LOG_", &["UNSPEC", "GROUP", "PREFIX", "SNAPLEN", "QTHRESHOLD", "LEVEL", "FLAGS"]),
            "flow_offload" => ("NFTA_FLOW_", &["UNSPEC", "TABLE_NAME"]),
            "nat" => {
                ("NFTA_NAT_", &["UNSPEC", "TYPE", "FAMILY", "REG_ADDR_MIN", "REG_ADDR_MAX", "REG_PROTO_MIN", "REG_PROTO_MAX", "FLAGS"])
            }
            _ => ("?", &[]),
        },
        Space::Data => ("NFTA_DATA_", &["UNSPEC", "VALUE", "VERDICT"]),
        Space::Verdict => ("NFTA_VERDICT_", &["UNSPEC", "CODE", "CHAIN"]),
        Space::Set => (
            "NFTA_SET_",
            &[
                "UNSPEC",
                "TABLE",
                "NAME",
                "FLAGS",
                "KEY_TYPE",
                "KEY_LEN",
                "DATA_TYPE",
                "DATA_LEN",
                "POLICY",
                "DESC",
                "ID",
                "TIMEOUT",
                "GC_INTERVAL",
                "USERDATA",
            ],
        ),
        Space::SetDesc => ("NFTA_SET_DESC_", &["UNSPEC", "SIZE"]),
        Space::SetElemList => ("NFTA_SET_ELEM_LIST_", &["UNSPEC", "TABLE", "SET", "ELEMENTS", "SET_ID"]),
        Space::Elements => ("", &[]),
        Space::SetElem => ("NFTA_SET_ELEM_", &["UNSPEC", "KEY", "DATA", "FLAGS"]),
        Space::Flowtable => ("NFTA_FLOWTABLE_", &["UNSPEC", "TABLE", "NAME", "HOOK", "USE", "HANDLE", "PAD", "FLAGS"]),
        Space::FlowtableHook => ("NFTA_FLOWTABLE_HOOK_", &["UNSPEC", "NUM", "PRIORITY", "DEVS"]),
        Space::Devices => ("NFTA_DEVICE_", &["UNSPEC", "NAME"]),
    }
}

/// The space of a nested attribute's contents: `name` is its name in
/// `space`, `expr` the expression named in the nest around it.
fn inner(space: Space, name: &str, expr: &'static str) -> Space {
    match (space, name) {
        (Space::Chain, "HOOK") => Space::Hook,
        (Space::Rule, "EXPRESSIONS") => Space::List,
        (Space::List, "ELEM") => Space::Expr,
        (Space::Expr, "DATA") => Space::ExprData(expr),
        (Space::ExprData(_), _) | (Space::SetElem, _) => Space::Data,
        (Space::Data, "VERDICT") => Space::Verdict,
        (Space::Set, "DESC") => Space::SetDesc,
        (Space::SetElemList, "ELEMENTS") => Space::Elements,
        (Space::Elements, _) => Space::SetElem,
        (Space::Flowtable, "HOOK") => Space::FlowtableHook,
        (Space::FlowtableHook, "DEVS") => Space::Devices,
        _ => Space::Data,
    }
}

/// The expression names the goldens can meet, as `'static` strings.
fn expr_name(v: &[u8]) -> &'static str {
    const KNOWN: [&str; 17] = [
        "meta",
        "ct",
        "rt",
        "cmp",
        "payload",
        "bitwise",
        "lookup",
        "immediate",
        "fib",
        "exthdr",
        "byteorder",
        "limit",
        "log",
        "flow_offload",
        "nat",
        "masq",
        "notrack",
    ];
    let s = std::str::from_utf8(v.split(|c| *c == 0).next().unwrap_or(v)).unwrap_or("");
    KNOWN.into_iter().find(|k| *k == s).unwrap_or("?")
}

fn attrs(b: &[u8], space: Space, out: &mut String, u16_at: &dyn Fn(&[u8], usize) -> u16) {
    let mut i = 0;
    let mut expr = "?";
    while i + 4 <= b.len() {
        let (len, kind) = (usize::from(u16_at(b, i)), u16_at(b, i + 2));
        let v = &b[i + 4..i + len];
        if i > 0 {
            out.push(' ');
        }
        let (prefix, table) = names(space);
        let number = kind & 0x3fff;
        let short = table.get(usize::from(number)).copied();
        let name = match (space, short) {
            (Space::Elements, _) => format!("[{number}]"),
            (_, Some(n)) => format!("{prefix}{n}"),
            (_, None) => format!("{prefix}{number}"),
        };
        if space == Space::Expr && short == Some("NAME") {
            expr = expr_name(v);
        }
        if kind & 0x8000 != 0 {
            out.push_str(&format!("{name}:{{"));
            attrs(v, inner(space, short.unwrap_or(""), expr), out, u16_at);
            out.push('}');
        } else if v.len() > 1 && v.last() == Some(&0) && v[..v.len() - 1].iter().all(|c| c.is_ascii_graphic() || *c == b' ') {
            out.push_str(&format!("{name}=\"{}\"", String::from_utf8_lossy(&v[..v.len() - 1])));
        } else {
            out.push_str(&format!("{name}="));
            v.iter().for_each(|c| out.push_str(&format!("{c:02x}")));
        }
        i += (len + 3) & !3;
    }
}

/// NFT_MSG_* by number (enum nf_tables_msg_types).
const MESSAGES: [&str; 24] = [
    "NEWTABLE",
    "GETTABLE",
    "DELTABLE",
    "NEWCHAIN",
    "GETCHAIN",
    "DELCHAIN",
    "NEWRULE",
    "GETRULE",
    "DELRULE",
    "NEWSET",
    "GETSET",
    "DELSET",
    "NEWSETELEM",
    "GETSETELEM",
    "DELSETELEM",
    "NEWGEN",
    "GETGEN",
    "TRACE",
    "NEWOBJ",
    "GETOBJ",
    "DELOBJ",
    "GETOBJ_RESET",
    "NEWFLOWTABLE",
    "GETFLOWTABLE",
];

/// One batch as text, its headers read in `order`.
pub(super) fn batch_text(bytes: &[u8], order: Order) -> String {
    let u16_at = |b: &[u8], i: usize| match order {
        Order::Little => u16::from_le_bytes([b[i], b[i + 1]]),
        Order::Big => u16::from_be_bytes([b[i], b[i + 1]]),
    };
    let u32_at = |b: &[u8], i: usize| match order {
        Order::Little => u32::from_le_bytes(b[i..i + 4].try_into().unwrap()),
        Order::Big => u32::from_be_bytes(b[i..i + 4].try_into().unwrap()),
    };
    let mut out = String::new();
    let mut at = 0;
    while at < bytes.len() {
        let b = &bytes[at..];
        let len = u32_at(b, 0) as usize;
        let (kind, flags) = (u16_at(b, 4), u16_at(b, 6));
        let name = match kind {
            0x10 => "BATCH_BEGIN".to_string(),
            0x11 => "BATCH_END".to_string(),
            k => MESSAGES.get(usize::from(k & 0xff)).map_or(format!("{k:#x}"), |n| n.to_string()),
        };
        let family = match b[16] {
            0 => "unspec",
            1 => "inet",
            2 => "ip",
            _ => "?",
        };
        out.push_str(&format!("{name} {family} flags={flags:#x} res_id={:02x}{:02x}", b[18], b[19]));
        if len > 20 {
            let space = match name.as_str() {
                "NEWTABLE" | "DELTABLE" => Space::Table,
                "NEWCHAIN" => Space::Chain,
                "NEWRULE" => Space::Rule,
                "NEWSET" => Space::Set,
                "NEWSETELEM" => Space::SetElemList,
                "NEWFLOWTABLE" => Space::Flowtable,
                _ => Space::Data,
            };
            out.push_str(" | ");
            attrs(&b[20..len], space, &mut out, &u16_at);
        }
        out.push('\n');
        at += (len + 3) & !3;
    }
    out
}
