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

use super::rules::{Base, Family, Hook, Item, PortMatch, Replace, Rule, Ruleset, Verdict, FLOWTABLE, LOG_BURST, LOG_PREFIX};
use crate::config::firewall::Proto;
use crate::config::types::{IfName, IpNet};
use crate::sys::nftnl::{self as nl, Expr, Order, Sent, Udata, Writer};

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
    pub modules: nl::Modules,
}

/// nasboot's userdata record in the first table it fills (a record as
/// nft writes userdata: a type byte nft does not use, a length byte,
/// then the value): the digest of the batch ([`nl::digest`], with this
/// record zeroed), the ruleset generation its commit makes and the
/// batch's hook devices ([`Encoded::hook_devices`]), little-endian. A
/// later apply finds its rule set loaded and untouched when the table
/// carries the digest of the batch it would send, the kernel is still at
/// that generation (every commit moves it on, so no change at all has
/// been committed since), and every hook device of the batch is still
/// bound (a device that goes away leaves without a commit). Nothing else
/// changes nf_tables: the rule sets have no dynamic sets or timeouts. A
/// kernel before 5.13 keeps no table userdata, so there every apply
/// loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Seal {
    pub digest: u64,
    pub generation: u32,
    pub hook_devices: u64,
}

const SEAL_TYPE: u8 = b'n';
const SEAL_LEN: usize = 2 + 8 + 4 + 8;

impl Seal {
    /// The seal in a table's userdata, if it carries one.
    pub(crate) fn read(udata: &[u8]) -> Option<Seal> {
        let mut rest = udata;
        while let [kind, len, tail @ ..] = rest {
            let (value, next) = tail.split_at_checked(usize::from(*len))?;
            if *kind == SEAL_TYPE && value.len() == SEAL_LEN - 2 {
                let digest = u64::from_le_bytes(value[..8].try_into().ok()?);
                let generation = u32::from_le_bytes(value[8..12].try_into().ok()?);
                let hook_devices = u64::from_le_bytes(value[12..].try_into().ok()?);
                return Some(Seal { digest, generation, hook_devices });
            }
            rest = next;
        }
        None
    }
}

impl Encoded {
    pub(crate) fn origin(&self, seq: u32) -> Option<Origin> {
        self.origins.iter().find(|(s, _)| *s == seq).map(|(_, o)| *o)
    }

    /// The digest of the batch as [`encode`] gives it, its seal zeroed
    /// (once sealed, the digest is the seal's).
    pub(crate) fn digest(&self) -> u64 {
        nl::digest(&self.sent)
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
        nl::messages(&self.sent, order, &mut |kind, attrs| hooked(kind, attrs, order, &mut sum));
        sum
    }
}

/// One hook device of table `table`'s chain or flowtable `name`, as a
/// number: their FNV-1a digest.
pub(crate) fn hook_device(table: &str, name: &str, dev: &str) -> u64 {
    [table, name, dev].iter().fold(nl::FNV_START, |h, part| nl::fnv(h, part.as_bytes()) ^ 0xff)
}

/// The devices an object hooks (a dump's reply or a batch's message),
/// added to `sum` ([`hook_device`]; a sum, so that the order of the
/// devices and of the objects does not matter).
pub(crate) fn hooked(kind: u8, attrs: &[u8], order: Order, sum: &mut u64) {
    let table = nl::find(attrs, order, 1).map(nl::str_value).unwrap_or_default();
    let name = match kind {
        nl::NEWCHAIN => nl::find(attrs, order, nl::CHAIN_NAME),
        nl::NEWFLOWTABLE => nl::find(attrs, order, nl::FLOWTABLE_NAME),
        _ => return,
    }
    .map(nl::str_value)
    .unwrap_or_default();
    nl::hook_devices(kind, attrs, order, &mut |dev| *sum = sum.wrapping_add(hook_device(table, name, dev)));
}

fn nfproto(f: Family) -> u8 {
    match f {
        Family::Inet => nl::NFPROTO_INET,
        Family::Ip => nl::NFPROTO_IPV4,
    }
}

struct Enc {
    w: Writer,
    origins: Vec<(u32, Origin)>,
    set_id: u32,
    seal_at: Option<usize>,
    /// The hook devices so far ([`Encoded::hook_devices`]).
    hooks: u64,
}

/// Encode `rs` as one batch, its messages numbered from `seq`, its seal
/// zeroed ([`Encoded::seal`] writes it). Pure.
pub(crate) fn encode(rs: &Ruleset, order: Order, seq: u32) -> Encoded {
    let mut e = Enc { w: Writer::batch(order, seq), origins: Vec::new(), set_id: 0, seal_at: None, hooks: 0 };
    for (ti, t) in rs.tables.iter().enumerate() {
        e.table(rs, ti, t);
    }
    let modules = e.w.modules();
    Encoded { sent: e.w.finish_batch(), origins: e.origins, seal_at: e.seal_at, hooks: e.hooks, modules }
}

/// An interface name as meta loads it: 16 bytes, NUL padded.
fn ifname(n: &IfName) -> [u8; 16] {
    let mut b = [0; 16];
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
        Proto::Tcp => 6,
        Proto::Udp => 17,
    }
}

/// An anonymous set's key: its type, length, and nft's userdata.
struct AnonKey {
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

impl Enc {
    fn order(&self) -> Order {
        self.w.order()
    }

    fn table(&mut self, rs: &Ruleset, ti: usize, t: &Replace) {
        let fam = nfproto(t.family);
        for kind in [nl::NEWTABLE, nl::DELTABLE] {
            let seq = self.w.msg(kind, fam, 0);
            self.w.put_str(nl::TABLE_NAME, t.name);
            if kind == nl::NEWTABLE {
                self.w.put_be32(nl::TABLE_FLAGS, 0);
            }
            self.origins.push((seq, Origin::Table { table: ti }));
        }
        let Some(body) = &t.body else { return };
        let seq = self.w.msg(nl::NEWTABLE, fam, 0);
        self.w.put_str(nl::TABLE_NAME, t.name);
        self.w.put_be32(nl::TABLE_FLAGS, 0);
        if self.seal_at.is_none() {
            let mut record = [0; SEAL_LEN];
            record[..2].copy_from_slice(&[SEAL_TYPE, (SEAL_LEN - 2) as u8]);
            self.seal_at = Some(self.w.put_at(nl::TABLE_USERDATA, &record));
        }
        self.origins.push((seq, Origin::Table { table: ti }));
        for (ci, c) in body.chains.iter().enumerate() {
            let seq = self.w.msg(nl::NEWCHAIN, fam, nl::NLM_F_CREATE);
            self.w.put_str(nl::CHAIN_TABLE, t.name);
            self.w.put_str(nl::CHAIN_NAME, &c.name);
            if let Some(b) = &c.base {
                self.base(b);
                if let Hook::Ingress(dev) = &b.hook {
                    self.hooks = self.hooks.wrapping_add(hook_device(t.name, &c.name, dev.as_str()));
                }
            }
            self.origins.push((seq, Origin::Chain { table: ti, chain: ci }));
        }
        let first_named = self.set_id + 1;
        for (si, s) in body.sets.iter().enumerate() {
            self.set_id += 1;
            let u = nl::udata_key(self.order(), nl::BYTEORDER_BIG, &[]);
            let seq = self.new_set(fam, t.name, s.name, nl::TYPE_INET_SERVICE, 2, None, &u);
            self.origins.push((seq, Origin::Set { table: ti, set: si }));
            let keys = port_keys(&s.ports);
            let seq = self.elements(fam, t.name, s.name, 2, &keys, &[]);
            self.origins.push((seq, Origin::Set { table: ti, set: si }));
        }
        if body.flowtable {
            let seq = self.w.msg(nl::NEWFLOWTABLE, fam, nl::NLM_F_CREATE);
            // The flowtable type of the family; nasboot's is in its inet table.
            if fam == nl::NFPROTO_INET {
                self.w.uses(nl::Modules::FLOWTABLE_INET);
            }
            self.w.put_str(nl::FLOWTABLE_TABLE, t.name);
            self.w.put_str(nl::FLOWTABLE_NAME, FLOWTABLE);
            let h = self.w.nest(nl::FLOWTABLE_HOOK);
            self.w.put_be32(nl::FLOWTABLE_HOOK_NUM, 0);
            self.w.put_be32(nl::FLOWTABLE_HOOK_PRIORITY, 0);
            let d = self.w.nest(nl::FLOWTABLE_HOOK_DEVS);
            // nft sends the devices in the reverse of the file's order.
            for dev in rs.wan.iter().rev().chain(rs.lan.iter().rev()) {
                self.w.put_str(nl::DEVICE_NAME, dev.as_str());
                self.hooks = self.hooks.wrapping_add(hook_device(t.name, FLOWTABLE, dev.as_str()));
            }
            self.w.end(d);
            self.w.end(h);
            self.w.put_be32(nl::FLOWTABLE_FLAGS, 0);
            self.origins.push((seq, Origin::Flowtable { table: ti }));
        }
        for (ci, c) in body.chains.iter().enumerate() {
            for (ri, r) in c.rules.iter().enumerate() {
                let named = |name: &str| body.sets.iter().position(|s| s.name == name).map_or(0, |i| first_named + i as u32);
                let seq = self.rule(rs, t.family, t.name, &c.name, r, &named);
                self.origins.push((seq, Origin::Rule { table: ti, chain: ci, rule: ri }));
            }
        }
    }

    fn base(&mut self, b: &Base) {
        self.w.put_str(nl::CHAIN_TYPE, if b.nat { "nat" } else { "filter" });
        if b.nat {
            self.w.uses(nl::Modules::CHAIN_NAT);
        }
        self.w.put_be32(nl::CHAIN_POLICY, if b.accept { nl::VERDICT_ACCEPT } else { nl::VERDICT_DROP });
        let h = self.w.nest(nl::CHAIN_HOOK);
        let num = match b.hook {
            Hook::Prerouting => nl::HOOK_PREROUTING,
            Hook::Input => nl::HOOK_INPUT,
            Hook::Forward => nl::HOOK_FORWARD,
            Hook::Output => nl::HOOK_OUTPUT,
            Hook::Postrouting => nl::HOOK_POSTROUTING,
            Hook::Ingress(_) => nl::HOOK_INGRESS,
        };
        self.w.put_be32(nl::HOOK_HOOKNUM, num);
        self.w.put_be32(nl::HOOK_PRIORITY, b.priority as u32);
        if let Hook::Ingress(dev) = &b.hook {
            self.w.put_str(nl::HOOK_DEV, dev.as_str());
        }
        self.w.end(h);
    }

    /// NEWSET: `desc` is the element count of an anonymous set (a
    /// constant one; a map if it has `data`), None for a named one.
    #[allow(clippy::too_many_arguments)]
    fn new_set(&mut self, fam: u8, table: &str, name: &str, ty: u32, len: u32, desc: Option<(u32, bool)>, u: &Udata) -> u32 {
        let seq = self.w.msg(nl::NEWSET, fam, nl::NLM_F_CREATE);
        self.w.put_str(nl::SET_TABLE, table);
        self.w.put_str(nl::SET_NAME, name);
        let flags = match desc {
            None => 0,
            Some((_, false)) => nl::SET_ANONYMOUS | nl::SET_CONSTANT,
            Some((_, true)) => nl::SET_ANONYMOUS | nl::SET_CONSTANT | nl::SET_MAP,
        };
        self.w.put_be32(nl::SET_FLAGS, flags);
        self.w.put_be32(nl::SET_KEY_TYPE, ty);
        self.w.put_be32(nl::SET_KEY_LEN, len);
        if let Some((_, true)) = desc {
            self.w.put_be32(nl::SET_DATA_TYPE, nl::DATA_VERDICT_TYPE);
            self.w.put_be32(nl::SET_DATA_LEN, 0);
        }
        self.w.put_be32(nl::SET_ID, self.set_id);
        if let Some((size, _)) = desc {
            let d = self.w.nest(nl::SET_DESC);
            self.w.put_be32(nl::SET_DESC_SIZE, size);
            self.w.end(d);
        }
        self.w.put(nl::SET_USERDATA, u);
        seq
    }

    /// NEWSETELEM: the keys, `len` bytes each, one after the other in
    /// `keys`; in a map, each with its verdict.
    fn elements(&mut self, fam: u8, table: &str, set: &str, len: usize, keys: &[u8], verdicts: &[(u32, Option<&str>)]) -> u32 {
        let seq = self.w.msg(nl::NEWSETELEM, fam, nl::NLM_F_CREATE);
        self.w.put_str(nl::SET_ELEM_LIST_TABLE, table);
        self.w.put_str(nl::SET_ELEM_LIST_SET, set);
        self.w.put_be32(nl::SET_ELEM_LIST_SET_ID, self.set_id);
        let list = self.w.nest(nl::SET_ELEM_LIST_ELEMENTS);
        for (i, key) in keys.chunks(len).enumerate() {
            // nft numbers the elements' nests from 1; the kernel reads
            // them in order whatever their type.
            let el = self.w.nest(i as u16 + 1);
            self.w.put_data(nl::SET_ELEM_KEY, key);
            if let Some((code, chain)) = verdicts.get(i) {
                self.w.put_verdict(nl::SET_ELEM_DATA, *code, *chain);
            }
            self.w.end(el);
        }
        self.w.end(list);
        seq
    }

    /// An anonymous set of `keys` (`key.len` bytes each), before the rule
    /// that looks it up; its id.
    fn anon(&mut self, fam: u8, table: &str, key: AnonKey, keys: &[u8]) -> u32 {
        self.set_id += 1;
        let n = (keys.len() / key.len as usize) as u32;
        self.new_set(fam, table, "__set%d", key.ty, key.len, Some((n, false)), &key.udata);
        self.elements(fam, table, "__set%d", key.len as usize, keys, &[]);
        self.set_id
    }

    /// The anonymous sets an item needs, written now (before the rule's
    /// message); their ids in `ids`, in the order `lower` uses them.
    fn sets_for(&mut self, rs: &Ruleset, arg: usize, fam: u8, table: &str, it: &Item, ids: &mut Vec<u32>) {
        // nft's typeof data: proto_desc ids (icmp 4, udp 6, tcp 8, icmpv6
        // 14) and fields (sport or type 1, dport 2) of a payload; a meta key.
        let o = self.order();
        let (key, keys): (AnonKey, Vec<u8>) = match *it {
            Item::IfName { out, names } if rs.names(names, arg).len() > 1 => {
                let udata = nl::udata_key(o, nl::BYTEORDER_HOST, &[nl::EXPR_META, if out { nl::META_OIFNAME } else { nl::META_IIFNAME }]);
                let mut keys = Vec::new();
                rs.names(names, arg).iter().for_each(|n| keys.extend_from_slice(&ifname(n)));
                (AnonKey { ty: nl::TYPE_IFNAME, len: 16, udata }, keys)
            }
            Item::TcpOrUdp => {
                let udata = nl::udata_key(o, nl::BYTEORDER_HOST, &[nl::EXPR_META, nl::META_L4PROTO]);
                (AnonKey { ty: nl::TYPE_INET_PROTO, len: 1, udata }, vec![6, 17])
            }
            Item::Port { proto, src, m: PortMatch::Any(ports) } => {
                let desc = if rs.proto(proto, arg) == Proto::Tcp { 8 } else { 6 };
                let udata = nl::udata_key(o, nl::BYTEORDER_BIG, &[nl::EXPR_PAYLOAD, desc, if src { 1 } else { 2 }]);
                (AnonKey { ty: nl::TYPE_INET_SERVICE, len: 2, udata }, port_keys(ports))
            }
            Item::Icmp { v6, types } if types.len() > 1 => {
                let udata = nl::udata_key(o, nl::BYTEORDER_BIG, &[nl::EXPR_PAYLOAD, if v6 { 14 } else { 4 }, 1]);
                let ty = if v6 { nl::TYPE_ICMPV6 } else { nl::TYPE_ICMP };
                (AnonKey { ty, len: 1, udata }, types.iter().map(|(_, t)| *t).collect())
            }
            Item::Vmap { lan } => {
                self.set_id += 1;
                let (mut keys, mut verdicts) = (Vec::new(), Vec::new());
                for (n, zone) in rs.vmap(lan) {
                    keys.extend_from_slice(&ifname(n));
                    verdicts.push((nl::VERDICT_JUMP, Some(zone)));
                }
                self.new_set(fam, table, "__map%d", nl::TYPE_IFNAME, 16, Some((verdicts.len() as u32, true)), &nl::udata_vmap(o));
                self.elements(fam, table, "__map%d", 16, &keys, &verdicts);
                ids.push(self.set_id);
                return;
            }
            _ => return,
        };
        ids.push(self.anon(fam, table, key, &keys));
    }

    fn rule(&mut self, rs: &Ruleset, family: Family, table: &str, chain: &str, r: &Rule, named: &dyn Fn(&str) -> u32) -> u32 {
        let fam = nfproto(family);
        let mut ids = Vec::new();
        for it in r.items {
            self.sets_for(rs, r.arg, fam, table, it, &mut ids);
        }
        let seq = self.w.msg(nl::NEWRULE, fam, nl::NLM_F_CREATE | nl::NLM_F_APPEND);
        self.w.put_str(nl::RULE_TABLE, table);
        self.w.put_str(nl::RULE_CHAIN, chain);
        let list = self.w.nest(nl::RULE_EXPRESSIONS);
        let mut deps = Deps::default();
        let mut ids = ids.into_iter();
        let mut items = r.items.iter().peekable();
        while let Some(it) = items.next() {
            // nft merges `udp sport A udp dport B` into one 4-byte compare.
            if let (Item::Port { proto, src: true, m: ms }, Some(Item::Port { proto: p2, src: false, m: md })) = (it, items.peek()) {
                if let (true, Some(s), Some(d)) = (p2 == proto, rs.port(*ms, r.arg), rs.port(*md, r.arg)) {
                    self.l4(&mut deps, proto_num(rs.proto(*proto, r.arg)));
                    let mut data = [0; 4];
                    data[..2].copy_from_slice(&s.to_be_bytes());
                    data[2..].copy_from_slice(&d.to_be_bytes());
                    self.payload(nl::PAYLOAD_TRANSPORT, 0, 4);
                    self.cmp(nl::CMP_EQ, &data);
                    items.next();
                    continue;
                }
            }
            self.lower(rs, r.arg, family, it, &mut deps, &mut ids, named);
        }
        self.w.end(list);
        seq
    }

    fn l4(&mut self, deps: &mut Deps, proto: u8) {
        if deps.l4 != Some(proto) {
            self.meta(nl::META_L4PROTO);
            self.cmp(nl::CMP_EQ, &[proto]);
            deps.l4 = Some(proto);
        }
    }

    fn nfproto(&mut self, family: Family, deps: &mut Deps, proto: u8) {
        if family == Family::Inet && deps.nfproto != Some(proto) {
            self.meta(nl::META_NFPROTO);
            self.cmp(nl::CMP_EQ, &[proto]);
            deps.nfproto = Some(proto);
        }
    }

    // The most common expressions, one call each.
    fn cmp(&mut self, op: u32, data: &[u8]) {
        self.w.expr(&Expr::Cmp { op, data });
    }
    fn payload(&mut self, base: u32, offset: u32, len: u32) {
        self.w.expr(&Expr::Payload { base, offset, len });
    }
    fn meta(&mut self, key: u32) {
        self.w.expr(&Expr::Meta { key });
    }

    /// A compare against a host-order u32 that meta, ct or fib loaded.
    fn cmp_host(&mut self, op: u32, v: u32) {
        let data = self.order().u32(v);
        self.w.expr(&Expr::Cmp { op, data: &data });
    }

    /// `ct state`/`ct status` flag test: `reg & bits != 0` (host order).
    fn ct_flags(&mut self, key: u32, bits: u32) {
        let mask = self.order().u32(bits);
        self.w.expr(&Expr::Ct { key });
        self.w.expr(&Expr::Bitwise { mask: &mask, op: false });
        self.cmp_host(nl::CMP_NEQ, 0);
    }

    #[allow(clippy::too_many_arguments)]
    fn lower(
        &mut self,
        rs: &Ruleset,
        arg: usize,
        family: Family,
        it: &Item,
        deps: &mut Deps,
        ids: &mut dyn Iterator<Item = u32>,
        named: &dyn Fn(&str) -> u32,
    ) {
        let mut lookup = |e: &mut Enc, map: bool| {
            let id = ids.next().unwrap_or(0);
            e.w.expr(&Expr::Lookup { set: if map { "__map%d" } else { "__set%d" }, id, map });
        };
        match *it {
            Item::IfName { out, names } => {
                self.meta(if out { nl::META_OIFNAME } else { nl::META_IIFNAME });
                match rs.names(names, arg) {
                    [one] => self.cmp(nl::CMP_EQ, &ifname(one)),
                    _ => lookup(self, false),
                }
            }
            Item::IifLo => {
                self.meta(nl::META_IIF);
                self.cmp_host(nl::CMP_EQ, nl::LOOPBACK_IFINDEX);
            }
            Item::TcpOrUdp => {
                self.meta(nl::META_L4PROTO);
                lookup(self, false);
            }
            Item::Port { proto, src, m } => {
                self.l4(deps, proto_num(rs.proto(proto, arg)));
                self.payload(nl::PAYLOAD_TRANSPORT, if src { 0 } else { 2 }, 2);
                match m {
                    PortMatch::Reply => {
                        self.cmp(nl::CMP_GTE, &rs.reply.lo().to_be_bytes());
                        self.cmp(nl::CMP_LTE, &rs.reply.hi().to_be_bytes());
                    }
                    PortMatch::Any(_) => lookup(self, false),
                    PortMatch::Named(set) => self.w.expr(&Expr::Lookup { set, id: named(set), map: false }),
                    _ => self.cmp(nl::CMP_EQ, &rs.port(m, arg).unwrap_or(0).to_be_bytes()),
                }
            }
            Item::TcpFlags { mask, eq, value, .. } => {
                self.l4(deps, 6);
                self.payload(nl::PAYLOAD_TRANSPORT, 13, 1);
                self.w.expr(&Expr::Bitwise { mask: &[mask], op: true });
                self.cmp(if eq { nl::CMP_EQ } else { nl::CMP_NEQ }, &[value]);
            }
            Item::CtState { invalid } => {
                let bits = if invalid { nl::CT_INVALID } else { nl::CT_ESTABLISHED | nl::CT_RELATED };
                self.ct_flags(nl::CT_STATE, bits);
            }
            Item::CtDnat => self.ct_flags(nl::CT_STATUS, nl::CT_STATUS_DNAT),
            Item::Ip { src, eq, net } => {
                self.nfproto(family, deps, nl::NFPROTO_IPV4);
                if let Some(n) = rs.net(net, arg) {
                    self.ipv4(src, eq, &n);
                }
            }
            Item::IpTcp => {
                self.nfproto(family, deps, nl::NFPROTO_IPV4);
                self.payload(nl::PAYLOAD_NETWORK, 9, 1);
                self.cmp(nl::CMP_EQ, &[6]);
            }
            Item::IpFrag { eq, value } => {
                self.nfproto(family, deps, nl::NFPROTO_IPV4);
                self.payload(nl::PAYLOAD_NETWORK, 6, 2);
                self.w.expr(&Expr::Bitwise { mask: &[0x1f, 0xff], op: true });
                self.cmp(if eq { nl::CMP_EQ } else { nl::CMP_NEQ }, &value.to_be_bytes());
            }
            Item::Ip6Frag => {
                self.nfproto(family, deps, nl::NFPROTO_IPV6);
                // The fragment header (44), its offset field: 13 bits.
                self.w.expr(&Expr::Exthdr { ty: 44, offset: 2, len: 2 });
                self.w.expr(&Expr::Bitwise { mask: &[0xff, 0xf8], op: true });
                self.cmp(nl::CMP_NEQ, &[0, 0]);
            }
            Item::Icmp { v6, types } => {
                self.nfproto(family, deps, if v6 { nl::NFPROTO_IPV6 } else { nl::NFPROTO_IPV4 });
                self.l4(deps, if v6 { 58 } else { 1 });
                self.payload(nl::PAYLOAD_TRANSPORT, 0, 1);
                match types {
                    [(_, t)] => self.cmp(nl::CMP_EQ, &[*t]),
                    _ => lookup(self, false),
                }
            }
            Item::FibLocal => {
                self.w.expr(&Expr::Fib { flags: nl::FIB_F_DADDR, result: nl::FIB_RESULT_ADDRTYPE });
                self.cmp_host(nl::CMP_EQ, nl::RTN_LOCAL);
            }
            Item::FlowAdd => self.w.expr(&Expr::FlowOffload { table: FLOWTABLE }),
            Item::ClampMss => {
                self.w.expr(&Expr::Rt { key: nl::RT_TCPMSS });
                self.w.expr(&Expr::Hton { len: 2, size: 2 });
                self.w.expr(&Expr::ExthdrWrite { ty: 2, offset: 2, len: 2 });
            }
            Item::Limit => self.w.expr(&Expr::Limit { rate: u64::from(rs.log_rate), unit: 60, burst: LOG_BURST }),
            Item::Log => self.w.expr(&Expr::Log { prefix: LOG_PREFIX }),
            Item::Notrack => self.w.expr(&Expr::Notrack),
            Item::Masquerade => self.w.expr(&Expr::Masq),
            Item::Dnat => {
                if let Some(d) = rs.fwd(arg) {
                    self.w.expr(&Expr::Immediate { reg: 1, data: &d.to.addr.octets() });
                    self.w.expr(&Expr::Immediate { reg: 2, data: &d.to.port.get().to_be_bytes() });
                    self.w.expr(&Expr::Dnat { family: u32::from(nl::NFPROTO_IPV4) });
                }
            }
            Item::Verdict(v) => {
                let (code, chain) = verdict(&v);
                self.w.expr(&Expr::Verdict { code, chain });
            }
            Item::Vmap { .. } => {
                self.meta(nl::META_IIFNAME);
                lookup(self, true);
            }
        }
    }

    /// `ip saddr|daddr [!=] NET`: a whole-byte prefix loads only its
    /// bytes; another loads all four and masks them (nft's way).
    fn ipv4(&mut self, src: bool, eq: bool, net: &IpNet) {
        let std::net::IpAddr::V4(addr) = net.network() else { return };
        let offset = if src { 12 } else { 16 };
        let op = if eq { nl::CMP_EQ } else { nl::CMP_NEQ };
        let bytes = addr.octets();
        let whole = net.prefix % 8 == 0;
        let len = if whole { u32::from(net.prefix / 8) } else { 4 };
        self.w.expr(&Expr::Payload { base: nl::PAYLOAD_NETWORK, offset, len });
        if !whole {
            let mask = crate::config::types::mask_v4(net.prefix).to_be_bytes();
            self.w.expr(&Expr::Bitwise { mask: &mask, op: false });
        }
        self.w.expr(&Expr::Cmp { op, data: &bytes[..len as usize] });
    }
}

fn verdict(v: &Verdict) -> (u32, Option<&str>) {
    match v {
        Verdict::Accept => (nl::VERDICT_ACCEPT, None),
        Verdict::Drop => (nl::VERDICT_DROP, None),
        Verdict::Jump(c) => (nl::VERDICT_JUMP, Some(c)),
    }
}
