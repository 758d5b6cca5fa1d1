#!/bin/sh
# Guest script: arm softdog (loaded with soft_margin=5) and never pet it.
echo "board: watchdog timeout=$(cat /sys/class/watchdog/watchdog0/timeout)"
exec 3>/dev/watchdog
echo "board: watchdog armed uptime=$(cut -d' ' -f1 /proc/uptime)"
sleep 60
echo "board: still alive after 60 s, watchdog did not fire"
exit 1
