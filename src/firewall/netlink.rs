//! The netlink emitter: the rule set ([`super::rules`]) as one nf_tables
//! batch, the messages nft 1.0.6 sends for the same `nft -f` file (byte
//! for byte, and with its flags: NEWTABLE and DELTABLE none, NEWRULE
//! create and append, the others create), in its order: per table,
//! NEWTABLE, DELTABLE, NEWTABLE, then every chain,
//! the named sets with their elements, the flowtable, and the rules, each
//! anonymous set just before the rule that uses it.
//!
//! The expressions are the ones `nft --debug=netlink` shows for the
//! file (the table in `shared/reference/nftables-netlink.md`), with the
//! dependencies nft inserts: `meta l4proto` before a transport header
//! field, `meta nfproto` before an IPv4 or IPv6 field in the `inet`
//! table, each once per rule; and nft's merge of `udp sport A udp dport
//! B` into one 4-byte compare. Set userdata is written as nft writes it,
//! so that `nft list ruleset` on a board that has nft shows the same
//! rules. The encoding itself is `crate::sys::nftnl`'s.

use super::modules::{Module, Modules};
use super::rules::{
    Base, Chain, Hook, Icmp, Instance, Item, Names, PortMatch, Replace, Rule, Ruleset, Set, TableFamily, Verdict, FLOWTABLE, L4, LOG_BURST,
    LOG_PREFIX,
};
use super::seal::{self, hook_device, SEAL_LEN, SEAL_TYPE};
use crate::config::firewall::Proto;
use crate::config::types::{IfName, IpNet};
use crate::sys::nftnl::{self as nl, Expr, Order, Sent, Udata, Writer};

// Protocol numbers (linux/in.h, linux/in6.h).
const IPPROTO_ICMP: u8 = 1;
const IPPROTO_TCP: u8 = 6;
const IPPROTO_UDP: u8 = 17;
const IPPROTO_ICMPV6: u8 = 58;
// Offsets into the IPv4 header (struct iphdr): frag_off, protocol, saddr
// and daddr.
const IPHDR_FRAG_OFF: u32 = 6;
const IPHDR_PROTOCOL: u32 = 9;
const IPHDR_SADDR: u32 = 12;
const IPHDR_DADDR: u32 = 16;
/// The IPv6 fragment header (NEXTHDR_FRAGMENT, net/ipv6.h), and the
/// offset of its frag_off field (struct frag_hdr).
const NEXTHDR_FRAGMENT: u8 = 44;
const FRAG_HDR_FRAG_OFF: u32 = 2;
// Offsets into the transport header: the UDP and TCP ports (struct
// udphdr, struct tcphdr), the TCP flags' byte, the ICMP type.
const TH_SOURCE: u32 = 0;
const TH_DEST: u32 = 2;
const TCPHDR_FLAGS: u32 = 13;
const ICMPHDR_TYPE: u32 = 0;
/// The TCP MSS option (TCPOPT_MSS, net/tcp.h): its value, 2 bytes after
/// its kind and length.
const TCPOPT_MSS: u8 = 2;
const TCPOPT_MSS_VALUE: u32 = 2;
/// An interface name as meta loads it (IFNAMSIZ), and a port's length.
const IFNAMSIZ: usize = 16;
const PORT_LEN: u32 = 2;
/// The limit's unit: a minute, in seconds.
const MINUTE: u64 = 60;

/// What each message of a batch came from, to name it in an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    Table { table: usize },
    Flowtable { table: usize },
    Set { table: usize, set: usize },
    Chain { table: usize, chain: usize },
    Rule { table: usize, chain: usize, rule: usize },
}

/// A batch and where each of its messages came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Encoded {
    pub sent: Sent,
    pub origins: Vec<(u32, Origin)>,
    /// Where the seal's value sits in `sent.bytes` (see [`Seal`]).
    seal_at: Option<usize>,
    /// Its hook devices ([`Encoded::hook_devices`]), summed as the chains
    /// and the flowtable that hook them were written.
    hooks: u64,
    /// The kernel modules it needs.
    pub modules: Modules,
}

impl Encoded {
    pub(crate) fn origin(&self, seq: u32) -> Option<Origin> {
        self.origins.iter().find(|(s, _)| *s == seq).map(|(_, o)| *o)
    }

    /// The digest of the batch as [`encode`] gives it, its seal zeroed
    /// (once sealed, the digest is the seal's).
    pub(crate) fn digest(&self) -> u64 {
        seal::digest(&self.sent)
    }

    /// Write the seal, once: the batch's digest, `generation`, the
    /// ruleset generation its commit will make (0, which the kernel never
    /// uses, when it could not be asked), and its hook devices.
    pub(crate) fn seal(&mut self, generation: u32) {
        let (digest, hooks) = (self.digest(), self.hooks);
        if let Some(at) = self.seal_at {
            self.sent.bytes[at + 2..at + 10].copy_from_slice(&digest.to_le_bytes());
            self.sent.bytes[at + 10..at + 14].copy_from_slice(&generation.to_le_bytes());
            self.sent.bytes[at + 14..at + SEAL_LEN].copy_from_slice(&hooks.to_le_bytes());
        }
    }

    /// Every device a chain or the flowtable of the batch hooks, as one
    /// number ([`hook_device`], summed as [`hooked`] sums a dump's): what a
    /// dump of the loaded tables must give for them to be whole.
    pub(crate) fn hook_devices(&self) -> u64 {
        self.hooks
    }

    /// The same, read back from the batch's messages as [`hooked`] reads a
    /// dump's: the unit tests' check of [`Encoded::hook_devices`].
    #[cfg(test)]
    pub(crate) fn hook_devices_sent(&self, order: Order) -> u64 {
        let mut sum = 0;
        nl::messages(&self.sent, order, &mut |kind, attrs| seal::hooked(kind, attrs, order, &mut sum));
        sum
    }
}

fn nfproto(f: TableFamily) -> u8 {
    match f {
        TableFamily::Inet => nl::NFPROTO_INET,
        TableFamily::Ip => nl::NFPROTO_IPV4,
    }
}

struct Enc {
    w: Writer,
    origins: Vec<(u32, Origin)>,
    set_id: u32,
    seal_at: Option<usize>,
    /// The hook devices so far ([`Encoded::hook_devices`]).
    hooks: u64,
    /// The kernel modules what was written needs.
    modules: Modules,
}

/// Encode `rs` as one batch, its messages numbered from `seq`, its seal
/// zeroed ([`Encoded::seal`] writes it). Pure.
pub(crate) fn encode(rs: &Ruleset, order: Order, seq: u32) -> Encoded {
    let modules = Modules::default().with(Module::NfTables);
    let mut e = Enc { w: Writer::batch(order, seq), origins: Vec::new(), set_id: 0, seal_at: None, hooks: 0, modules };
    for (ti, t) in rs.tables.iter().enumerate() {
        e.table(rs, ti, t);
    }
    Encoded { sent: e.w.finish_batch(), origins: e.origins, seal_at: e.seal_at, hooks: e.hooks, modules: e.modules }
}

/// An interface name as meta loads it: 16 bytes, NUL padded.
fn ifname(n: &IfName) -> [u8; IFNAMSIZ] {
    let mut b = [0; IFNAMSIZ];
    b[..n.as_str().len()].copy_from_slice(n.as_str().as_bytes());
    b
}

/// Ports as set keys: 2 bytes each, network order.
fn port_keys(ports: &[u16]) -> Vec<u8> {
    let mut keys = Vec::with_capacity(2 * ports.len());
    ports.iter().for_each(|p| keys.extend_from_slice(&p.to_be_bytes()));
    keys
}

fn proto_num(p: Proto) -> u8 {
    match p {
        Proto::Tcp => IPPROTO_TCP,
        Proto::Udp => IPPROTO_UDP,
    }
}

/// What NEWSET makes: a named set, or an anonymous constant set or
/// verdict map of `size` elements.
#[derive(Clone, Copy)]
enum SetKind {
    Named,
    Constant { size: u32 },
    VerdictMap { size: u32 },
}

/// A set's key: its type, length, and nft's userdata.
struct SetKey {
    ty: u32,
    len: u32,
    udata: Udata,
}

/// The rule's dependencies so far: nft inserts each once per rule.
#[derive(Default)]
struct Deps {
    nfproto: Option<u8>,
    l4: Option<u8>,
}

/// The table whose rules are being written.
struct TableCx<'t> {
    rs: &'t Ruleset,
    family: TableFamily,
    name: &'t str,
    /// The batch id of the table's named set of that name.
    named: &'t dyn Fn(&str) -> u32,
}

/// One rule being lowered: what its items read, and what it has written.
struct RuleCx<'r> {
    rs: &'r Ruleset,
    /// The LAN interface or port forward the rule stands for.
    of: Instance,
    family: TableFamily,
    /// The ids of the rule's anonymous sets, in the order it looks them up.
    ids: std::vec::IntoIter<u32>,
    named: &'r dyn Fn(&str) -> u32,
    deps: Deps,
}

impl Enc {
    fn order(&self) -> Order {
        self.w.order()
    }

    /// One expression, and the modules it needs.
    fn expr(&mut self, e: &Expr<'_>) {
        self.modules = self.modules.with_expr(e);
        self.w.expr(e);
    }

    /// Table `ti`, replaced: created empty, deleted, then, with a body,
    /// defined again with its chains, named sets, flowtable and rules.
    fn table(&mut self, rs: &Ruleset, ti: usize, t: &Replace) {
        let fam = nfproto(t.family);
        for kind in [nl::NFT_MSG_NEWTABLE, nl::NFT_MSG_DELTABLE] {
            let seq = self.w.msg(kind, fam, 0);
            self.w.put_str(nl::NFTA_TABLE_NAME, t.name);
            if kind == nl::NFT_MSG_NEWTABLE {
                self.w.put_be32(nl::NFTA_TABLE_FLAGS, 0);
            }
            self.origins.push((seq, Origin::Table { table: ti }));
        }
        let Some(body) = &t.body else { return };
        let seq = self.w.msg(nl::NFT_MSG_NEWTABLE, fam, 0);
        self.w.put_str(nl::NFTA_TABLE_NAME, t.name);
        self.w.put_be32(nl::NFTA_TABLE_FLAGS, 0);
        if self.seal_at.is_none() {
            let mut record = [0; SEAL_LEN];
            record[..2].copy_from_slice(&[SEAL_TYPE, (SEAL_LEN - 2) as u8]);
            self.seal_at = Some(self.w.put_at(nl::NFTA_TABLE_USERDATA, &record));
        }
        self.origins.push((seq, Origin::Table { table: ti }));
        for (ci, c) in body.chains.iter().enumerate() {
            let seq = self.chain(t.name, fam, c);
            self.origins.push((seq, Origin::Chain { table: ti, chain: ci }));
        }
        let first_named = self.set_id + 1;
        for (si, s) in body.sets.iter().enumerate() {
            for seq in self.named_set(t.name, fam, s) {
                self.origins.push((seq, Origin::Set { table: ti, set: si }));
            }
        }
        if body.flowtable {
            let seq = self.flowtable(rs, t.name, fam);
            self.origins.push((seq, Origin::Flowtable { table: ti }));
        }
        let named = |name: &str| body.sets.iter().position(|s| s.name == name).map_or(0, |i| first_named + i as u32);
        let tcx = TableCx { rs, family: t.family, name: t.name, named: &named };
        for (ci, c) in body.chains.iter().enumerate() {
            for (ri, r) in c.rules.iter().enumerate() {
                let seq = self.rule(&tcx, &c.name, r);
                self.origins.push((seq, Origin::Rule { table: ti, chain: ci, rule: ri }));
            }
        }
    }

    /// NEWCHAIN, with its hook if it is a base chain.
    fn chain(&mut self, table: &str, fam: u8, c: &Chain) -> u32 {
        let seq = self.w.msg(nl::NFT_MSG_NEWCHAIN, fam, nl::NLM_F_CREATE);
        self.w.put_str(nl::NFTA_CHAIN_TABLE, table);
        self.w.put_str(nl::NFTA_CHAIN_NAME, &c.name);
        if let Some(b) = &c.base {
            self.base(b);
            if let Hook::Ingress(dev) = &b.hook {
                self.hooks = self.hooks.wrapping_add(hook_device(table, &c.name, dev.as_str()));
            }
        }
        seq
    }

    /// A named set of ports: NEWSET, then NEWSETELEM.
    fn named_set(&mut self, table: &str, fam: u8, s: &Set) -> [u32; 2] {
        self.set_id += 1;
        let key = SetKey { ty: nl::TYPE_INET_SERVICE, len: PORT_LEN, udata: nl::udata_key(self.order(), nl::BYTEORDER_BIG_ENDIAN, &[]) };
        let set = self.new_set(fam, table, s.name, &key, SetKind::Named);
        let keys = port_keys(&s.ports);
        [set, self.elements(fam, table, s.name, PORT_LEN as usize, &keys, &[])]
    }

    /// NEWFLOWTABLE over the LAN and WAN devices, on the ingress hook.
    fn flowtable(&mut self, rs: &Ruleset, table: &str, fam: u8) -> u32 {
        let seq = self.w.msg(nl::NFT_MSG_NEWFLOWTABLE, fam, nl::NLM_F_CREATE);
        // The flowtable type of the family; nasboot's is in its inet table.
        if fam == nl::NFPROTO_INET {
            self.modules = self.modules.with(Module::NfFlowTableInet);
        }
        self.w.put_str(nl::NFTA_FLOWTABLE_TABLE, table);
        self.w.put_str(nl::NFTA_FLOWTABLE_NAME, FLOWTABLE);
        let h = self.w.nest(nl::NFTA_FLOWTABLE_HOOK);
        self.w.put_be32(nl::NFTA_FLOWTABLE_HOOK_NUM, nl::NF_NETDEV_INGRESS);
        self.w.put_be32(nl::NFTA_FLOWTABLE_HOOK_PRIORITY, 0);
        let d = self.w.nest(nl::NFTA_FLOWTABLE_HOOK_DEVS);
        // nft sends the devices in the reverse of the file's order.
        for dev in rs.wan.iter().rev().chain(rs.lan.iter().rev()) {
            self.w.put_str(nl::NFTA_DEVICE_NAME, dev.as_str());
            self.hooks = self.hooks.wrapping_add(hook_device(table, FLOWTABLE, dev.as_str()));
        }
        self.w.end(d);
        self.w.end(h);
        self.w.put_be32(nl::NFTA_FLOWTABLE_FLAGS, 0);
        seq
    }

    fn base(&mut self, b: &Base) {
        self.w.put_str(nl::NFTA_CHAIN_TYPE, if b.nat { "nat" } else { "filter" });
        if b.nat {
            self.modules = self.modules.with(Module::NftChainNat);
        }
        self.w.put_be32(nl::NFTA_CHAIN_POLICY, if b.accept { nl::NF_ACCEPT } else { nl::NF_DROP });
        let h = self.w.nest(nl::NFTA_CHAIN_HOOK);
        let num = match b.hook {
            Hook::Prerouting => nl::NF_INET_PRE_ROUTING,
            Hook::Input => nl::NF_INET_LOCAL_IN,
            Hook::Forward => nl::NF_INET_FORWARD,
            Hook::Output => nl::NF_INET_LOCAL_OUT,
            Hook::Postrouting => nl::NF_INET_POST_ROUTING,
            Hook::Ingress(_) => nl::NF_INET_INGRESS,
        };
        self.w.put_be32(nl::NFTA_HOOK_HOOKNUM, num);
        self.w.put_be32(nl::NFTA_HOOK_PRIORITY, b.priority as u32);
        if let Hook::Ingress(dev) = &b.hook {
            self.w.put_str(nl::NFTA_HOOK_DEV, dev.as_str());
        }
        self.w.end(h);
    }

    /// NEWSET of a set of `kind`.
    fn new_set(&mut self, fam: u8, table: &str, name: &str, key: &SetKey, kind: SetKind) -> u32 {
        let seq = self.w.msg(nl::NFT_MSG_NEWSET, fam, nl::NLM_F_CREATE);
        self.w.put_str(nl::NFTA_SET_TABLE, table);
        self.w.put_str(nl::NFTA_SET_NAME, name);
        let (flags, size) = match kind {
            SetKind::Named => (0, None),
            SetKind::Constant { size } => (nl::NFT_SET_ANONYMOUS | nl::NFT_SET_CONSTANT, Some(size)),
            SetKind::VerdictMap { size } => (nl::NFT_SET_ANONYMOUS | nl::NFT_SET_CONSTANT | nl::NFT_SET_MAP, Some(size)),
        };
        self.w.put_be32(nl::NFTA_SET_FLAGS, flags);
        self.w.put_be32(nl::NFTA_SET_KEY_TYPE, key.ty);
        self.w.put_be32(nl::NFTA_SET_KEY_LEN, key.len);
        if let SetKind::VerdictMap { .. } = kind {
            self.w.put_be32(nl::NFTA_SET_DATA_TYPE, nl::NFT_DATA_VERDICT);
            self.w.put_be32(nl::NFTA_SET_DATA_LEN, 0);
        }
        self.w.put_be32(nl::NFTA_SET_ID, self.set_id);
        if let Some(size) = size {
            let d = self.w.nest(nl::NFTA_SET_DESC);
            self.w.put_be32(nl::NFTA_SET_DESC_SIZE, size);
            self.w.end(d);
        }
        self.w.put(nl::NFTA_SET_USERDATA, &key.udata);
        seq
    }

    /// NEWSETELEM: the keys, `len` bytes each, one after the other in
    /// `keys`; in a map, each with its verdict.
    fn elements(&mut self, fam: u8, table: &str, set: &str, len: usize, keys: &[u8], verdicts: &[(u32, Option<&str>)]) -> u32 {
        let seq = self.w.msg(nl::NFT_MSG_NEWSETELEM, fam, nl::NLM_F_CREATE);
        self.w.put_str(nl::NFTA_SET_ELEM_LIST_TABLE, table);
        self.w.put_str(nl::NFTA_SET_ELEM_LIST_SET, set);
        self.w.put_be32(nl::NFTA_SET_ELEM_LIST_SET_ID, self.set_id);
        let list = self.w.nest(nl::NFTA_SET_ELEM_LIST_ELEMENTS);
        for (i, key) in keys.chunks(len).enumerate() {
            // nft numbers the elements' nests from 1; the kernel reads
            // them in order whatever their type.
            let el = self.w.nest(i as u16 + 1);
            self.w.put_data(nl::NFTA_SET_ELEM_KEY, key);
            if let Some((code, chain)) = verdicts.get(i) {
                self.w.put_verdict(nl::NFTA_SET_ELEM_DATA, *code, *chain);
            }
            self.w.end(el);
        }
        self.w.end(list);
        seq
    }

    /// An anonymous set of `keys` (`key.len` bytes each), before the rule
    /// that looks it up; its id.
    fn anon(&mut self, fam: u8, table: &str, key: SetKey, keys: &[u8]) -> u32 {
        self.set_id += 1;
        let size = (keys.len() / key.len as usize) as u32;
        self.new_set(fam, table, "__set%d", &key, SetKind::Constant { size });
        self.elements(fam, table, "__set%d", key.len as usize, keys, &[]);
        self.set_id
    }

    /// The anonymous sets an item needs, written now (before the rule's
    /// message); their ids in `ids`, in the order `lower` uses them.
    fn sets_for(&mut self, rs: &Ruleset, of: Instance, fam: u8, table: &str, it: &Item, ids: &mut Vec<u32>) {
        // nft's typeof data: a payload's protocol and field; a meta key.
        let o = self.order();
        let (key, keys): (SetKey, Vec<u8>) = match *it {
            Item::IfName { out, names } if rs.names(names, of).len() > 1 => {
                let udata = nl::udata_key(
                    o,
                    nl::BYTEORDER_HOST_ENDIAN,
                    &[nl::EXPR_META, if out { nl::NFT_META_OIFNAME } else { nl::NFT_META_IIFNAME }],
                );
                let mut keys = Vec::new();
                rs.names(names, of).iter().for_each(|n| keys.extend_from_slice(&ifname(n)));
                (SetKey { ty: nl::TYPE_IFNAME, len: IFNAMSIZ as u32, udata }, keys)
            }
            Item::TcpOrUdp => {
                let udata = nl::udata_key(o, nl::BYTEORDER_HOST_ENDIAN, &[nl::EXPR_META, nl::NFT_META_L4PROTO]);
                (SetKey { ty: nl::TYPE_INET_PROTO, len: 1, udata }, vec![IPPROTO_TCP, IPPROTO_UDP])
            }
            Item::Port { proto, src, m: PortMatch::Any(ports) } => {
                let desc = if rs.proto(proto, of) == Proto::Tcp { nl::PROTO_DESC_TCP } else { nl::PROTO_DESC_UDP };
                let field = if src { nl::THDR_SPORT } else { nl::THDR_DPORT };
                let udata = nl::udata_key(o, nl::BYTEORDER_BIG_ENDIAN, &[nl::EXPR_PAYLOAD, desc, field]);
                (SetKey { ty: nl::TYPE_INET_SERVICE, len: PORT_LEN, udata }, port_keys(ports))
            }
            Item::Icmp { v6, types } if types.len() > 1 => {
                let udata = nl::udata_key(
                    o,
                    nl::BYTEORDER_BIG_ENDIAN,
                    &[nl::EXPR_PAYLOAD, if v6 { nl::PROTO_DESC_ICMPV6 } else { nl::PROTO_DESC_ICMP }, nl::ICMPHDR_TYPE],
                );
                let ty = if v6 { nl::TYPE_ICMPV6 } else { nl::TYPE_ICMP };
                (SetKey { ty, len: 1, udata }, types.iter().map(|(_, t)| *t).collect())
            }
            Item::Vmap { lan } => {
                self.set_id += 1;
                let (mut keys, mut verdicts) = (Vec::new(), Vec::new());
                for (n, zone) in rs.vmap(lan) {
                    keys.extend_from_slice(&ifname(n));
                    verdicts.push((nl::NFT_JUMP, Some(zone)));
                }
                let key = SetKey { ty: nl::TYPE_IFNAME, len: IFNAMSIZ as u32, udata: nl::udata_vmap(o) };
                self.new_set(fam, table, "__map%d", &key, SetKind::VerdictMap { size: verdicts.len() as u32 });
                self.elements(fam, table, "__map%d", IFNAMSIZ, &keys, &verdicts);
                ids.push(self.set_id);
                return;
            }
            _ => return,
        };
        ids.push(self.anon(fam, table, key, &keys));
    }

    fn rule(&mut self, t: &TableCx<'_>, chain: &str, r: &Rule) -> u32 {
        let fam = nfproto(t.family);
        let mut ids = Vec::new();
        for it in r.items {
            self.sets_for(t.rs, r.instance, fam, t.name, it, &mut ids);
        }
        let seq = self.w.msg(nl::NFT_MSG_NEWRULE, fam, nl::NLM_F_CREATE | nl::NLM_F_APPEND);
        self.w.put_str(nl::NFTA_RULE_TABLE, t.name);
        self.w.put_str(nl::NFTA_RULE_CHAIN, chain);
        let list = self.w.nest(nl::NFTA_RULE_EXPRESSIONS);
        let mut cx = RuleCx { rs: t.rs, of: r.instance, family: t.family, ids: ids.into_iter(), named: t.named, deps: Deps::default() };
        let mut items = r.items.iter().peekable();
        while let Some(it) = items.next() {
            if self.ports_merged(&mut cx, it, items.peek().copied()) {
                items.next();
            } else {
                self.lower(&mut cx, it);
            }
        }
        self.w.end(list);
        seq
    }

    /// nft merges `udp sport A udp dport B` into one 4-byte compare: done
    /// when `it` and `next` are such a pair.
    fn ports_merged(&mut self, cx: &mut RuleCx<'_>, it: &Item, next: Option<&Item>) -> bool {
        let (Item::Port { proto, src: true, m: ms }, Some(Item::Port { proto: p2, src: false, m: md })) = (it, next) else {
            return false;
        };
        let (true, Some(s), Some(d)) = (p2 == proto, cx.rs.port(*ms, cx.of), cx.rs.port(*md, cx.of)) else {
            return false;
        };
        self.l4(cx, proto_num(cx.rs.proto(*proto, cx.of)));
        let mut data = [0; 4];
        data[..2].copy_from_slice(&s.to_be_bytes());
        data[2..].copy_from_slice(&d.to_be_bytes());
        self.payload(nl::NFT_PAYLOAD_TRANSPORT_HEADER, TH_SOURCE, 2 * PORT_LEN);
        self.cmp(nl::NFT_CMP_EQ, &data);
        true
    }

    /// `meta l4proto`, once per rule, before a transport header field.
    fn l4(&mut self, cx: &mut RuleCx<'_>, proto: u8) {
        if cx.deps.l4 != Some(proto) {
            self.meta(nl::NFT_META_L4PROTO);
            self.cmp(nl::NFT_CMP_EQ, &[proto]);
            cx.deps.l4 = Some(proto);
        }
    }

    /// `meta nfproto`, once per rule, before an IPv4 or IPv6 field in the
    /// `inet` table.
    fn nfproto(&mut self, cx: &mut RuleCx<'_>, proto: u8) {
        if cx.family == TableFamily::Inet && cx.deps.nfproto != Some(proto) {
            self.meta(nl::NFT_META_NFPROTO);
            self.cmp(nl::NFT_CMP_EQ, &[proto]);
            cx.deps.nfproto = Some(proto);
        }
    }

    // The most common expressions, one call each.
    fn cmp(&mut self, op: u32, data: &[u8]) {
        self.expr(&Expr::Cmp { op, data });
    }
    fn payload(&mut self, base: u32, offset: u32, len: u32) {
        self.expr(&Expr::Payload { base, offset, len });
    }
    fn meta(&mut self, key: u32) {
        self.expr(&Expr::Meta { key });
    }

    /// A compare against a host-order u32 that meta, ct or fib loaded.
    fn cmp_host(&mut self, op: u32, v: u32) {
        let data = self.order().u32(v);
        self.expr(&Expr::Cmp { op, data: &data });
    }

    /// `ct state`/`ct status` flag test: `reg & bits != 0` (host order).
    fn ct_flags(&mut self, key: u32, bits: u32) {
        let mask = self.order().u32(bits);
        self.expr(&Expr::Ct { key });
        self.expr(&Expr::Bitwise { mask: &mask, op: false });
        self.cmp_host(nl::NFT_CMP_NEQ, 0);
    }

    /// The lookup in the rule's next anonymous set (`map`: verdict map).
    fn lookup(&mut self, cx: &mut RuleCx<'_>, map: bool) {
        let id = cx.ids.next().unwrap_or(0);
        self.expr(&Expr::Lookup { set: if map { "__map%d" } else { "__set%d" }, id, map });
    }

    /// One item of a rule, as the expressions nft writes for it.
    fn lower(&mut self, cx: &mut RuleCx<'_>, it: &Item) {
        match *it {
            Item::IfName { out, names } => self.ifname(cx, out, names),
            Item::IifLo => {
                self.meta(nl::NFT_META_IIF);
                self.cmp_host(nl::NFT_CMP_EQ, nl::LOOPBACK_IFINDEX);
            }
            Item::TcpOrUdp => {
                self.meta(nl::NFT_META_L4PROTO);
                self.lookup(cx, false);
            }
            Item::Port { proto, src, m } => self.port(cx, proto, src, m),
            Item::TcpFlags { mask, eq, value, .. } => {
                self.l4(cx, IPPROTO_TCP);
                self.payload(nl::NFT_PAYLOAD_TRANSPORT_HEADER, TCPHDR_FLAGS, 1);
                self.expr(&Expr::Bitwise { mask: &[mask], op: true });
                self.cmp(if eq { nl::NFT_CMP_EQ } else { nl::NFT_CMP_NEQ }, &[value]);
            }
            Item::CtState { invalid } => {
                let established = nl::NF_CT_STATE_BIT(nl::IP_CT_ESTABLISHED) | nl::NF_CT_STATE_BIT(nl::IP_CT_RELATED);
                self.ct_flags(nl::NFT_CT_STATE, if invalid { nl::NF_CT_STATE_INVALID_BIT } else { established });
            }
            Item::CtDnat => self.ct_flags(nl::NFT_CT_STATUS, nl::IPS_DST_NAT),
            Item::Ip { src, eq, net } => {
                self.nfproto(cx, nl::NFPROTO_IPV4);
                if let Some(n) = cx.rs.net(net, cx.of) {
                    self.ipv4(src, eq, &n);
                }
            }
            Item::IpTcp => {
                self.nfproto(cx, nl::NFPROTO_IPV4);
                self.payload(nl::NFT_PAYLOAD_NETWORK_HEADER, IPHDR_PROTOCOL, 1);
                self.cmp(nl::NFT_CMP_EQ, &[IPPROTO_TCP]);
            }
            Item::IpFrag { eq, value } => self.ip_frag(cx, eq, value),
            Item::Ip6Frag => self.ip6_frag(cx),
            Item::Icmp { v6, types } => self.icmp(cx, v6, types),
            Item::FibLocal => {
                self.expr(&Expr::Fib { flags: nl::NFTA_FIB_F_DADDR, result: nl::NFT_FIB_RESULT_ADDRTYPE });
                self.cmp_host(nl::NFT_CMP_EQ, nl::RTN_LOCAL);
            }
            Item::FlowAdd => self.expr(&Expr::FlowOffload { table: FLOWTABLE }),
            Item::ClampMss => self.clamp_mss(),
            Item::Limit => self.expr(&Expr::Limit { rate: u64::from(cx.rs.log_rate), unit: MINUTE, burst: LOG_BURST }),
            Item::Log => self.expr(&Expr::Log { prefix: LOG_PREFIX }),
            Item::Notrack => self.expr(&Expr::Notrack),
            Item::Masquerade => self.expr(&Expr::Masq),
            Item::Dnat => self.dnat(cx),
            Item::Verdict(v) => {
                let (code, chain) = verdict(&v);
                self.expr(&Expr::Verdict { code, chain });
            }
            Item::Vmap { .. } => {
                self.meta(nl::NFT_META_IIFNAME);
                self.lookup(cx, true);
            }
        }
    }

    /// `iifname`/`oifname`: one compare for one name, else a lookup.
    fn ifname(&mut self, cx: &mut RuleCx<'_>, out: bool, names: Names) {
        self.meta(if out { nl::NFT_META_OIFNAME } else { nl::NFT_META_IIFNAME });
        match cx.rs.names(names, cx.of) {
            [one] => self.cmp(nl::NFT_CMP_EQ, &ifname(one)),
            _ => self.lookup(cx, false),
        }
    }

    /// `tcp|udp sport|dport …`: the reply range as two compares (not the
    /// range expression), a set by lookup, one port by compare.
    fn port(&mut self, cx: &mut RuleCx<'_>, proto: L4, src: bool, m: PortMatch) {
        self.l4(cx, proto_num(cx.rs.proto(proto, cx.of)));
        self.payload(nl::NFT_PAYLOAD_TRANSPORT_HEADER, if src { TH_SOURCE } else { TH_DEST }, PORT_LEN);
        match m {
            PortMatch::Reply => {
                self.cmp(nl::NFT_CMP_GTE, &cx.rs.reply.lo().to_be_bytes());
                self.cmp(nl::NFT_CMP_LTE, &cx.rs.reply.hi().to_be_bytes());
            }
            PortMatch::Any(_) => self.lookup(cx, false),
            PortMatch::Named(set) => self.expr(&Expr::Lookup { set, id: (cx.named)(set), map: false }),
            _ => self.cmp(nl::NFT_CMP_EQ, &cx.rs.port(m, cx.of).unwrap_or(0).to_be_bytes()),
        }
    }

    /// `ip frag-off & 0x1fff ==|!= VALUE`.
    fn ip_frag(&mut self, cx: &mut RuleCx<'_>, eq: bool, value: u16) {
        self.nfproto(cx, nl::NFPROTO_IPV4);
        self.payload(nl::NFT_PAYLOAD_NETWORK_HEADER, IPHDR_FRAG_OFF, 2);
        self.expr(&Expr::Bitwise { mask: &[0x1f, 0xff], op: true });
        self.cmp(if eq { nl::NFT_CMP_EQ } else { nl::NFT_CMP_NEQ }, &value.to_be_bytes());
    }

    /// `frag frag-off != 0`: the fragment header's offset field, 13 bits.
    fn ip6_frag(&mut self, cx: &mut RuleCx<'_>) {
        self.nfproto(cx, nl::NFPROTO_IPV6);
        self.expr(&Expr::Exthdr { ty: NEXTHDR_FRAGMENT, offset: FRAG_HDR_FRAG_OFF, len: 2 });
        self.expr(&Expr::Bitwise { mask: &[0xff, 0xf8], op: true });
        self.cmp(nl::NFT_CMP_NEQ, &[0, 0]);
    }

    /// `icmp type …`, `icmpv6 type …`: one compare for one type, else a
    /// lookup.
    fn icmp(&mut self, cx: &mut RuleCx<'_>, v6: bool, types: Icmp) {
        self.nfproto(cx, if v6 { nl::NFPROTO_IPV6 } else { nl::NFPROTO_IPV4 });
        self.l4(cx, if v6 { IPPROTO_ICMPV6 } else { IPPROTO_ICMP });
        self.payload(nl::NFT_PAYLOAD_TRANSPORT_HEADER, ICMPHDR_TYPE, 1);
        match types {
            [(_, t)] => self.cmp(nl::NFT_CMP_EQ, &[*t]),
            _ => self.lookup(cx, false),
        }
    }

    /// `tcp option maxseg size set rt mtu`: the MSS, one 2-byte value.
    fn clamp_mss(&mut self) {
        self.expr(&Expr::Rt { key: nl::NFT_RT_TCPMSS });
        self.expr(&Expr::Hton { len: 2, size: 2 });
        self.expr(&Expr::ExthdrWrite { ty: TCPOPT_MSS, offset: TCPOPT_MSS_VALUE, len: 2 });
    }

    /// `dnat to` the rule's port forward's target: its address and port
    /// into the registers the nat expression reads.
    fn dnat(&mut self, cx: &mut RuleCx<'_>) {
        if let Some(d) = cx.rs.fwd(cx.of) {
            self.expr(&Expr::Immediate { reg: nl::NFT_REG_1, data: &d.to.addr.octets() });
            self.expr(&Expr::Immediate { reg: nl::NFT_REG_2, data: &d.to.port.get().to_be_bytes() });
            self.expr(&Expr::Dnat { family: u32::from(nl::NFPROTO_IPV4) });
        }
    }

    /// `ip saddr|daddr [!=] NET`: a whole-byte prefix loads only its
    /// bytes; another loads all four and masks them (nft's way).
    fn ipv4(&mut self, src: bool, eq: bool, net: &IpNet) {
        let std::net::IpAddr::V4(addr) = net.network() else { return };
        let offset = if src { IPHDR_SADDR } else { IPHDR_DADDR };
        let op = if eq { nl::NFT_CMP_EQ } else { nl::NFT_CMP_NEQ };
        let bytes = addr.octets();
        let whole = net.prefix % 8 == 0;
        let len = if whole { u32::from(net.prefix / 8) } else { 4 };
        self.expr(&Expr::Payload { base: nl::NFT_PAYLOAD_NETWORK_HEADER, offset, len });
        if !whole {
            let mask = crate::config::types::mask_v4(net.prefix).to_be_bytes();
            self.expr(&Expr::Bitwise { mask: &mask, op: false });
        }
        self.expr(&Expr::Cmp { op, data: &bytes[..len as usize] });
    }
}

fn verdict(v: &Verdict) -> (u32, Option<&str>) {
    match v {
        Verdict::Accept => (nl::NF_ACCEPT, None),
        Verdict::Drop => (nl::NF_DROP, None),
        Verdict::Jump(c) => (nl::NFT_JUMP, Some(c)),
    }
}
