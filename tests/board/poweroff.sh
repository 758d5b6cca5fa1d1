#!/bin/sh
# Guest script: report and return 0; /init then powers off.
echo "board: uname $(uname -srm)"
echo "board: modules $(cut -d' ' -f1 /proc/modules | tr '\n' ' ')"
[ -x /usr/sbin/nasboot ] && echo "board: nasboot present"
exit 0
