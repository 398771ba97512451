# Sourced by scripts/sanitize.sh: how the sanitizers report while the tests run. Every report
# stops the process (halt_on_error) and so fails its test. Leak checking is off: Open MPI's
# dlopen'd components leak at MPI_Finalize from modules already unloaded, so the reports' frames
# are "<unknown module>" and no suppression can single them out from tessel's own code.
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=0:strict_init_order=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
