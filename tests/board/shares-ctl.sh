#!/bin/sh
# Guest control handler for tests/nfs/board-shares.sh (busybox sh, run by
# `nc -l -p 7000 -e`): one command from the host; the answer is every line
# until the connection closes.
#   add-share   add the share `extra` (/srv/nfs) to /etc/nasboot.toml, then
#               plan and apply (see below)
#   del-share   put back the profile as it was before add-share, then plan
#               and apply
#   workgroup   add `workgroup = "NASLAB"` to [samba] (a global setting),
#               then plan and apply
#   apply       plan and apply the profile as it is
#   fw-off      delete nasboot's nftables table (the firewall opened, to
#               see what the servers' own binding refuses)
#   stop        end the suite
# Plan and apply: `nasboot plan`'s lines as "plan: ...", `nasboot -v
# apply`'s as "apply: ...", then "rc=APPLY-STATUS pid-before=P pid-after=Q
# alive=yes|no": ksmbd.mountd's pid in its lock file before and after (the
# same pid: reloaded; another: restarted), and whether the latter runs.
read -r cmd
P=/etc/nasboot.toml
pid() { cat /run/ksmbd.lock 2>/dev/null || echo none; }
apply() {
    nasboot plan </dev/null 2>&1 | sed 's/^/plan: /'
    before=$(pid)
    # Not the connection's socket: a ksmbd.mountd started by the apply
    # must not hold it open.
    nasboot -v apply </dev/null >/tmp/ctl-apply.log 2>&1
    rc=$?
    sed 's/^/apply: /' /tmp/ctl-apply.log
    # ksmbd.mountd writes its lock file once it runs.
    i=0
    while [ $i -lt 20 ] && ! [ -s /run/ksmbd.lock ]; do
        sleep 0.5
        i=$((i + 1))
    done
    after=$(pid)
    alive=no
    [ "$after" = none ] || ! kill -0 "$after" 2>/dev/null || alive=yes
    echo "rc=$rc pid-before=$before pid-after=$after alive=$alive"
}
case $cmd in
    add-share)
        cp "$P" /tmp/profile.before-add
        printf '\n[[samba.share]]\nname = "extra"\npath = "/srv/nfs"\nguest_ok = true\n' >>"$P"
        apply
        ;;
    del-share)
        cp /tmp/profile.before-add "$P"
        apply
        ;;
    workgroup)
        sed -i '/^\[samba\]$/a workgroup = "NASLAB"' "$P"
        grep -q '^workgroup = "NASLAB"$' "$P" || echo "error: no workgroup line"
        apply
        ;;
    apply) apply ;;
    fw-off)
        nft delete table inet nasboot
        echo "fw-off rc=$?"
        ;;
    stop) : >/tmp/ctl-stop ;;
    *) echo "error unknown command '$cmd'" ;;
esac
