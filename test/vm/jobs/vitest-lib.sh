# shellcheck shell=bash
# Sourced by guest jobs. run_vitest TAG [vitest args...]: runs the kernel vitest config and leaves its
# JSON report in $SMC_RUN_VM_RUN/results/vitest-TAG.json and the kernel release in results/kernel, for
# the host's test/vm/lane-report.cjs (which fails the lane on any skipped test or missing report).
# run_vitest_config CONFIG TAG [vitest args...]: the same with another config (the host suite's).
: "${SMC_RUN_VM_RUN:?not in a guest}"
run_vitest_config() {
  local config=$1 tag=$2; shift 2
  mkdir -p "$SMC_RUN_VM_RUN/results"
  uname -r > "$SMC_RUN_VM_RUN/results/kernel"
  CI=1 FORCE_COLOR=0 node node_modules/vitest/vitest.mjs run --config "$config" \
    --reporter=default --reporter=json --outputFile.json="$SMC_RUN_VM_RUN/results/vitest-$tag.json" "$@"
}
run_vitest() {
  run_vitest_config vitest.kernel.config.mts "$@"
}
