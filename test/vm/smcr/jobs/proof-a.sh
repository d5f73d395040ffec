# SMC-R proof, guest a (client side); guest b runs proof-b.sh. Waits until b's echo server listens
# (b-ready), then sends 1 MiB under the launcher and checks the echo's sha256 and that the connection is
# SMC-R (getSmcInfo in the client, `smc-run stats sockets` from outside). a-done tells b to finish.
set -euo pipefail
. test/vm/smcr/jobs/pair-lib.sh
trap 'pair_mark a-done' EXIT
PORT=${SMC_RUN_PROOF_PORT:-7070}
pair_wait b-ready 300
pair_step "client under smc-run: 1 MiB echo via $SMC_RUN_PEER_IP:$PORT"
node bin/smc-run node test/vm/smcr/jobs/proof-echo.cjs client "$SMC_RUN_PEER_IP" "$PORT" 1048576
pair_step "kernel view"
dmesg | grep -E 'SMC-R|smc' | tail -n 5 || true
# the bytes went over rxe0 (RoCE v2 over UDP), not as TCP segments
rdma statistic show link rxe0/1 2>/dev/null | tr ' ' '\n' | grep -A1 -xE 'sent_pkts|rcvd_pkts' | paste -sd' ' || true
