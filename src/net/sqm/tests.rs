//! SQM on a fake board whose traffic control answers as the kernel does
//! (`FakeNetif`'s tc model): exact plans, idempotence, removal, the
//! refusals, and the roll-back of a step the kernel refuses halfway.

use crate::config::{self, Profile};
use crate::net::tests::{apply_all, plan_lines as lines};
use crate::seam::fake::FakeBoard;
use crate::seam::netif::{Kind, TcKind};
use crate::sys::ethtool::LinkSettings;
use crate::sys::tc::{INGRESS_HANDLE, OURS, TC_H_ROOT};

fn profile(sqm: &str) -> Profile {
    let text = format!(
        "[board]\nname = \"t\"\n[firewall]\nprofile = \"off\"\n[[interface]]\nname = \"eth1\"\nrole = \"wan\"\nmethod = \"manual\"\n{sqm}"
    );
    config::parse_bytes("t.toml", text.as_bytes()).unwrap_or_else(|e| panic!("{e}")).profile
}

const SQM: &str = "[interface.sqm]\negress_kbit = 2850\ningress_kbit = 3800\noverhead = 18\n";

/// A board with eth1 (a 100 Mb/s NIC, up) and the SQM modules listed in
/// modules.dep.
fn board() -> FakeBoard {
    let mut b = FakeBoard::new();
    let l = b.netif.add("eth1", 3);
    l.state.up = true;
    l.nic.link = Some(LinkSettings { speed: 100, ..LinkSettings::default() });
    b.sysctl.values.insert("kernel.osrelease".into(), "6.1.0\n".into());
    let dep = "kernel/net/sched/sch_cake.ko:\nkernel/net/sched/sch_fq_codel.ko:\nkernel/net/sched/sch_htb.ko:\n\
               kernel/drivers/net/ifb.ko:\nkernel/net/sched/act_mirred.ko:\nkernel/net/sched/cls_u32.ko:\n\
               kernel/net/sched/sch_ingress.ko:\n";
    b.files.files.insert("/lib/modules/6.1.0/modules.dep".into(), dep.as_bytes().to_vec());
    b.files.files.insert("/lib/modules/6.1.0/modules.builtin".into(), b"kernel/net/ipv4/tcp_cubic.ko\n".to_vec());
    b
}

#[test]
fn cake_both_ways_then_nothing_to_do() {
    let p = profile(SQM);
    let mut b = board();
    let (actions, notes) = lines(&p, &mut b);
    assert_eq!(
        actions,
        ["eth1: sqm:\n            create ifb4eth1 (ifb, nasboot's)\n            ifb4eth1: up\n            \
          ifb4eth1: qdisc replace root handle 4e42: cake bandwidth 3800kbit besteffort overhead 18 ingress\n            \
          eth1: qdisc add handle ffff: ingress\n            \
          eth1: filter add parent ffff: protocol all prio 10 u32 match u32 0 0 action mirred egress redirect dev ifb4eth1\n            \
          eth1: qdisc replace root handle 4e42: cake bandwidth 2850kbit besteffort overhead 18"]
    );
    assert!(notes.is_empty(), "{notes:?}");
    let r = apply_all(&p, &mut b);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let ifb = b.netif.links.get("ifb4eth1").expect("created");
    assert_eq!((ifb.alias.as_deref(), ifb.state.up), (Some("nasboot"), true));
    let ifb_index = ifb.state.index;
    assert!(b.netif.tc.iter().any(|o| o.index == 3 && o.kind == TcKind::U32 { redirect: Some(ifb_index) }));
    // Applied: nothing left to do, and nothing is sent again.
    assert_eq!(lines(&p, &mut b).0, Vec::<String>::new());
    let before = b.effects().len();
    apply_all(&p, &mut b);
    assert_eq!(b.effects().len(), before);
}

#[test]
fn a_new_rate_is_changed_in_place_and_removal_takes_all_of_it() {
    let mut b = board();
    apply_all(&profile(SQM), &mut b);
    let p = profile(&SQM.replace("2850", "1900"));
    assert_eq!(
        lines(&p, &mut b).0,
        ["eth1: sqm:\n            eth1: qdisc replace root handle 4e42: cake bandwidth 1900kbit besteffort overhead 18"]
    );
    apply_all(&p, &mut b);
    // The section removed: the WAN's root and ingress qdiscs and the IFB go.
    let p = profile("");
    assert_eq!(
        lines(&p, &mut b).0,
        [
            "eth1: sqm:\n            eth1: qdisc del root handle 4e42:",
            "ifb4eth1: sqm:\n            eth1: qdisc del ingress handle ffff:\n            remove ifb4eth1 (nasboot's ifb)"
        ]
    );
    let r = apply_all(&p, &mut b);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert!(b.netif.tc.is_empty(), "{:?}", b.netif.tc);
    assert!(!b.netif.links.contains_key("ifb4eth1"));
}

#[test]
fn no_cake_means_fq_codel_under_htb_and_the_plan_says_so() {
    let mut b = board();
    let dep = b.files.files.get_mut(std::path::Path::new("/lib/modules/6.1.0/modules.dep")).expect("set");
    *dep = String::from_utf8_lossy(dep).replace("sch_cake", "sch_sfq").into_bytes();
    let p = profile(&format!("{SQM}link_layer = \"ptm\"\n"));
    let (actions, notes) = lines(&p, &mut b);
    assert_eq!(notes, ["eth1: sqm: the kernel has no sch_cake, so fq_codel under HTB shapes (qdisc = \"auto\")"]);
    // PTM: the rate 1/65 lower (2850 kbit/s -> 2806).
    assert!(actions[0].contains("eth1: class replace parent 4e42: classid 4e42:1 htb rate 2806kbit overhead 18"), "{actions:?}");
    assert!(actions[0].contains("eth1: qdisc replace parent 4e42:1 handle 4e43: fq_codel"), "{actions:?}");
    assert!(apply_all(&p, &mut b).errors.is_empty());
    assert_eq!(lines(&p, &mut b).0, Vec::<String>::new());
    // cake asked for by name on this kernel: refused, nothing sent.
    let mut b2 = board();
    let dep = b2.files.files.get_mut(std::path::Path::new("/lib/modules/6.1.0/modules.dep")).expect("set");
    *dep = String::from_utf8_lossy(dep).replace("sch_cake", "sch_sfq").into_bytes();
    let p = profile(&format!("{SQM}qdisc = \"cake\"\n"));
    assert_eq!(lines(&p, &mut b2).0, ["eth1: sqm: qdisc = \"cake\": the kernel has no sch_cake; nothing will be shaped"]);
    let r = apply_all(&p, &mut b2);
    assert_eq!(r.errors.len(), 1);
    assert!(b2.netif.tc.is_empty() && !b2.netif.links.contains_key("ifb4eth1"));
}

#[test]
fn refusals_name_the_key_and_apply_nothing() {
    // Above the link's speed (100 Mb/s).
    let p = profile("[interface.sqm]\negress_kbit = 200000\n");
    let mut b = board();
    assert_eq!(lines(&p, &mut b).0, ["eth1: sqm: egress_kbit = 200000 is above the link's speed, 100 Mb/s; nothing will be shaped"]);
    let r = apply_all(&p, &mut b);
    assert_eq!(r.errors.len(), 1);
    assert!(b.netif.tc.is_empty());
    // Refused on a board already shaped: what is there stays, the
    // download's IFB too.
    let mut b = board();
    apply_all(&profile(SQM), &mut b);
    let shaped = b.netif.tc.clone();
    let p = profile(&SQM.replace("2850", "200000"));
    assert_eq!(lines(&p, &mut b).0, ["eth1: sqm: egress_kbit = 200000 is above the link's speed, 100 Mb/s; nothing will be shaped"]);
    apply_all(&p, &mut b);
    assert_eq!(b.netif.tc, shaped);
    assert!(b.netif.links.contains_key("ifb4eth1"));
    // No IFB in the kernel: the download cannot be shaped, and the upload
    // is not shaped alone either.
    let mut b = board();
    let dep = b.files.files.get_mut(std::path::Path::new("/lib/modules/6.1.0/modules.dep")).expect("set");
    *dep = String::from_utf8_lossy(dep).replace("ifb.ko", "dummy.ko").into_bytes();
    let (actions, _) = lines(&profile(SQM), &mut b);
    assert_eq!(
        actions,
        ["eth1: sqm: ingress_kbit: the kernel has no ifb, which shaping the download needs (drop ingress_kbit to shape the upload only); \
          nothing will be shaped"]
    );
    // A root qdisc of another's is left alone.
    let mut b = board();
    b.netif.tc.push(crate::seam::netif::TcObject {
        index: 3,
        handle: 0x0001_0000,
        parent: TC_H_ROOT,
        prio: 0,
        kind: TcKind::Htb,
        stats: Default::default(),
    });
    assert_eq!(
        lines(&profile(SQM), &mut b).0,
        ["eth1: sqm: its root qdisc is htb 1:, which nasboot did not make, and is left alone; nothing will be shaped"]
    );
    // An IFB of that name that is not nasboot's.
    let mut b = board();
    b.netif.add("ifb4eth1", 9).kind = Some(Kind::Other(heapless::String::try_from("ifb").expect("fits")));
    assert!(lines(&profile(SQM), &mut b).0[0].contains("ingress_kbit: ifb4eth1 exists and is not nasboot's"));
}

#[test]
fn a_step_the_kernel_refuses_halfway_is_taken_back() {
    // The module list says cake; the kernel has none after all (ENOENT
    // when the IFB's qdisc is set, after the IFB was made).
    let mut b = board();
    b.netif.tc_missing.push("cake");
    let r = apply_all(&profile(SQM), &mut b);
    assert_eq!(r.errors.len(), 1);
    let shown = r.errors[0].to_string();
    assert!(shown.contains("eth1 sqm: the kernel refused `ifb4eth1: qdisc replace root handle 4e42: cake"), "{shown}");
    assert!(shown.contains("No such file or directory (ENOENT)"), "{shown}");
    assert!(b.netif.tc.is_empty(), "{:?}", b.netif.tc);
    assert!(!b.netif.links.contains_key("ifb4eth1"), "the IFB it made is removed");
    // The ingress redirect refused (after the IFB's shaper was set): the
    // shaper and the ingress qdisc go too.
    let mut b = board();
    b.netif.tc.push(crate::seam::netif::TcObject {
        index: 3,
        handle: INGRESS_HANDLE,
        parent: crate::sys::tc::TC_H_INGRESS,
        prio: 0,
        kind: TcKind::Ingress,
        stats: Default::default(),
    });
    let (actions, _) = lines(&profile(SQM), &mut b);
    assert!(actions[0].contains("ingress_kbit: eth1 has an ingress qdisc nasboot did not make"), "{actions:?}");
    let _ = OURS;
}

#[test]
fn modules_are_found_where_distributions_install_them() {
    // No module lists: Debian's compressed module files, and fq_codel
    // built in (modules.builtin), OpenWrt's flat directory for ifb.
    let mut b = FakeBoard::new();
    b.netif.add("eth1", 3).state.up = true;
    b.sysctl.values.insert("kernel.osrelease".into(), "6.12.0\n".into());
    let m = "/lib/modules/6.12.0";
    for f in ["kernel/net/sched/sch_cake.ko.xz", "kernel/net/sched/act_mirred.ko.zst", "kernel/net/sched/cls_u32.ko", "ifb.ko"] {
        b.files.files.insert(format!("{m}/{f}").into(), Vec::new());
    }
    b.files.files.insert("/sys/module/sch_ingress".into(), Vec::new());
    let p = profile(SQM);
    let (actions, notes) = lines(&p, &mut b);
    assert!(notes.is_empty(), "{notes:?}");
    assert!(actions[0].contains("cake bandwidth 3800kbit"), "{actions:?}");
    // sch_cake missing, fq_codel built in: fq_codel under HTB, said so.
    b.files.files.remove(std::path::Path::new(&format!("{m}/kernel/net/sched/sch_cake.ko.xz")));
    b.files
        .files
        .insert(format!("{m}/modules.builtin").into(), b"kernel/net/sched/sch_fq_codel.ko\nkernel/net/sched/sch_htb.ko\n".to_vec());
    let (actions, notes) = lines(&p, &mut b);
    assert_eq!(notes, ["eth1: sqm: the kernel has no sch_cake, so fq_codel under HTB shapes (qdisc = \"auto\")"]);
    assert!(actions[0].contains("fq_codel"), "{actions:?}");
    // Without modules.builtin, a module in no file and not in modules.dep
    // may be built in: not refused, tried (the kernel's answer is the
    // judge), and the plan says it cannot tell for cake.
    b.files.files.remove(std::path::Path::new(&format!("{m}/modules.builtin")));
    b.files.files.insert(format!("{m}/modules.dep").into(), b"kernel/net/sched/sch_htb.ko:\n".to_vec());
    let (actions, notes) = lines(&profile(&format!("{SQM}qdisc = \"fq_codel\"\n")), &mut b);
    assert!(notes.is_empty(), "{notes:?}");
    assert!(actions[0].contains("qdisc replace parent 4e42:1 handle 4e43: fq_codel"), "{actions:?}");
    let (_, notes) = lines(&p, &mut b);
    assert_eq!(notes, ["eth1: sqm: no module list tells whether the kernel has sch_cake; cake is tried"]);
}

#[test]
fn every_module_is_listed_once_with_a_file_of_its_own() {
    use super::Module;
    let mut files: Vec<&str> = Module::ALL.iter().map(|m| m.module()).collect();
    files.sort_unstable();
    files.dedup();
    assert_eq!(files.len(), Module::ALL.len(), "{files:?}");
    assert!(Module::DOWNLOAD.iter().chain(Module::CAKE).chain(Module::FQ_CODEL_HTB).all(|m| Module::ALL.contains(m)));
}
