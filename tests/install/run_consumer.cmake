# Installs the built lathe into a scratch prefix, then configures, builds and runs a separate
# project that finds it with find_package(lathe CONFIG REQUIRED), as a user's project would.
# Inputs: BUILD_DIR, SOURCE_DIR, WORK_DIR, CXX_COMPILER, EXTRA_FLAGS.
file(REMOVE_RECURSE ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/build -G Ninja
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
if(NOT last_output MATCHES "lathe [0-9]+\\.[0-9]+\\.[0-9]+: \\(n \\+ 1\\) has bounds \\[2, 65\\]")
  message(FATAL_ERROR "unexpected output from the consumer:\n${last_output}")
endif()
message(STATUS "consumer ran: ${last_output}")
