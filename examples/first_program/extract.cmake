# cmake -DREADME=README.md -DOUT=first.c -P extract.cmake
# Writes the README's first program (the ```c block after the comment that
# names readme_first_program) to OUT, so the test compiles what the README
# shows. Fails when the marker or the block is missing.
file(READ ${README} text)
string(FIND "${text}" "<!-- readme_first_program" at)
if(at LESS 0)
  message(FATAL_ERROR "${README}: no <!-- readme_first_program marker")
endif()
string(SUBSTRING "${text}" ${at} -1 text)
string(FIND "${text}" "```c\n" begin)
if(begin LESS 0)
  message(FATAL_ERROR "${README}: no ```c block after the readme_first_program marker")
endif()
math(EXPR begin "${begin} + 5")
string(SUBSTRING "${text}" ${begin} -1 text)
string(FIND "${text}" "\n```" end)
if(end LESS 0)
  message(FATAL_ERROR "${README}: the first program's block does not end")
endif()
math(EXPR end "${end} + 1")
string(SUBSTRING "${text}" 0 ${end} code)
file(WRITE ${OUT}.tmp "${code}")
# Only a changed program touches OUT, so an edit elsewhere in the README
# recompiles nothing.
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
file(REMOVE ${OUT}.tmp)
