#!/bin/sh
# Guest script: count this boot on /data (synced), then let softdog reset the
# board: the count must survive the unclean reset.
sh /board/disk-count.sh || exit 1
exec 3>/dev/watchdog
echo "board: watchdog armed, waiting for reset"
sleep 60
exit 1
