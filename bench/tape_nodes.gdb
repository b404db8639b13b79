# The tape's length at each sweep of a program built with the engine:
#   gdb -q -batch -x bench/tape_nodes.gdb --args PROGRAM ARGS < INPUT | grep NODES
# (dr_reverse: a gradient or Jacobian; dr_gradient: a scalar gradient of
# the Haskell front end's quick path)
set pagination off
set breakpoint pending on
break dr_reverse
commands
silent
printf "NODES %lu\n", (unsigned long) dr_tape_len($rdi)
continue
end
break dr_gradient
commands
silent
printf "NODES %lu\n", (unsigned long) dr_tape_len($rdi)
continue
end
run
