# Sourced by scripts/sanitize.sh: how the sanitizers report while the tests run. Every report
# stops the process (halt_on_error) and so fails its test.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=0:strict_init_order=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
