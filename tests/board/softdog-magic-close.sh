#!/bin/sh
# Guest script: open softdog, pet, magic close with 'V', outlive the margin.
exec 3>/dev/watchdog
printf 'x' >&3
printf 'V' >&3
exec 3>&-
echo "board: magic close done uptime=$(cut -d' ' -f1 /proc/uptime)"
sleep 8
echo "board: survived 8 s after magic close, state=$(cat /sys/class/watchdog/watchdog0/state)"
exit 0
