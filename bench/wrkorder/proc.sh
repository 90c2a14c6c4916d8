# proc.sh, sourced by run.sh and series.sh: CPU ticks (100 a second) from
# /proc. The machine's busy ticks are user, nice, system, irq and softirq;
# the ticks the hypervisor stole (other guests of the host: the noise) are
# apart from them.
ticks() { awk '{print $14+$15}' /proc/$1/stat; }            # a process's own
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }
steal() { awk '/^cpu /{print $9}' /proc/stat; }
# perop TICKS COUNT: TICKS as µs per one of COUNT.
perop() { awk -v t=$1 -v n=$2 'BEGIN{printf "%.1f", t*10000/n}'; }
