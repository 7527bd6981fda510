# Run at every build (cmake -P): writes OUT, a header defining LATHE_SOURCE_HASH, the SHA-256 of
# lathe's sources (src/ and include/ under ROOT, by path relative to ROOT). What lathe generated and
# stored on disk (rendered kernels: runtime/program_cache.cpp) is keyed by it, so a build whose
# sources differ never reads another's. OUT changes only when the hash does.
file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/src/*.cpp ${ROOT}/src/*.hpp ${ROOT}/include/*.hpp)
list(SORT files)
set(all "")
foreach(f ${files})
  file(SHA256 ${ROOT}/${f} h)
  string(APPEND all "${f} ${h}\n")
endforeach()
string(SHA256 total "${all}")
file(WRITE ${OUT}.tmp "// Generated at build time by cmake/source_hash.cmake.\n#pragma once\n#define LATHE_SOURCE_HASH \"${total}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
file(REMOVE ${OUT}.tmp)
