//! Forwarded flows, for `status`: how many connections conntrack holds
//! and how many of them the flowtable carries. The kernel marks an
//! offloaded entry `[OFFLOAD]` (software) or `[HW_OFFLOAD]` in
//! /proc/net/nf_conntrack (net/netfilter/nf_conntrack_standalone.c,
//! `ct_show_offload`).

/// Tracked and offloaded connections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Flows {
    pub tracked: usize,
    pub offloaded: usize,
}

/// Count the entries of /proc/net/nf_conntrack's text. Pure.
pub(crate) fn count(text: &str) -> Flows {
    let mut f = Flows::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        f.tracked += 1;
        if line.split_whitespace().any(|w| w == "[OFFLOAD]" || w == "[HW_OFFLOAD]") {
            f.offloaded += 1;
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offloaded_entries_are_counted_from_the_kernel_s_own_lines() {
        // Two lines as a 6.1 malta kernel prints them, one offloaded.
        let text = "ipv4     2 tcp      6 src=192.168.1.10 dst=198.51.100.1 sport=40000 dport=5001 src=198.51.100.1 dst=198.51.100.2 sport=5001 dport=40000 [OFFLOAD] mark=0 zone=0 use=3\n\
                    ipv4     2 udp      17 29 src=192.168.1.10 dst=198.51.100.1 sport=5353 dport=53 [UNREPLIED] src=198.51.100.1 dst=198.51.100.2 sport=53 dport=5353 mark=0 zone=0 use=2\n";
        assert_eq!(count(text), Flows { tracked: 2, offloaded: 1 });
        assert_eq!(count(""), Flows::default());
    }
}
