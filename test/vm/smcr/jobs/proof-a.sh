# shellcheck shell=bash
# SMC-R proof, guest a (client side); guest b runs proof-b.sh; ../boot-pair.sh runs the pair.
# Starts the client under the launcher at once (it waits for b's b-ready itself, so both guests pay the
# Node start-up together), sends 1 MiB, checks the echo's sha256 and that the connection is SMC-R
# (getSmcInfo in the client, `smc-run stats sockets` from outside). a-done tells b to finish.
set -euo pipefail
. test/vm/smcr/jobs/pair-lib.sh
trap 'pair_mark a-done' EXIT
PORT=${SMC_RUN_PROOF_PORT:-7070}
pair_step "client under smc-run: 1 MiB echo via $SMC_RUN_PEER_IP:$PORT once b is ready"
node bin/smc-run node test/vm/smcr/jobs/proof-echo.cjs client "$SMC_RUN_PEER_IP" "$PORT" 1048576 \
  "$SMC_RUN_VM_RUN/b-ready" "$SMC_RUN_VM_RUN/rc-$PAIR_PEER"
pair_step "kernel view"
dmesg | grep -E 'smc: SMC-R' | tail -n 3 || true
# the 2 MiB went over rxe0 (RoCE v2 in UDP, about 1 KiB per packet): TCP carried only the SMC handshake
echo "rxe0 $(rdma statistic show link rxe0/1 2>/dev/null | tr ' ' '\n' | grep -A1 -xE 'sent_pkts|rcvd_pkts' | grep -v -- -- | paste -sd' ')" || true
awk '/^Tcp:/ { if (!h) { for (i = 1; i <= NF; i++) k[i] = $i; h = 1 } else for (i = 1; i <= NF; i++) if (k[i] ~ /^(InSegs|OutSegs)$/) printf "tcp %s %s\n", k[i], $i }' /proc/net/snmp | paste -sd' ' || true
