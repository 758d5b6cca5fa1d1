#!/bin/sh
# Guest script: count boots on the persistent disk mounted at /data.
grep -q " /data " /proc/mounts || { echo "board: /data not mounted"; exit 1; }
n=0
[ -f /data/boots ] && n=$(cat /data/boots)
n=$((n + 1))
echo "$n" >/data/boots
sync
echo "board: boots=$n"
