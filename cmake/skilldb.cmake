# The one preamble of every build of this tree: the whole tree (the
# top-level CMakeLists.txt) and the modules that also build on their own
# (verify/, models/, trainer/: the GPU machine has no RocksDB, SQLite or
# ICU). It sets the language, the warnings, the build options every build
# shares, and the helpers below. Included once per configure.
include_guard(GLOBAL)

get_filename_component(SKILLDB_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)

set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)
# Release when nothing is asked for: what scripts/build.sh builds and CI
# tests, so a plain `cmake -S . -B build` builds what was tested.
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE Release)
endif()

option(SKILLDB_BUILD_TESTS "Build the doctest suites" ON)
option(SKILLDB_BUILD_BENCHMARKS
       "Build the benchmark drivers (benchmarks/, models/bench, policy/bench, trainer/bench)" OFF)
# Off by default: a build with another compiler or another version may warn
# where the one the project is tested with does not, and a user's build must
# not fail on that. The project's scripts and CI turn it on.
option(SKILLDB_WERROR "Treat warnings in skilldb's own sources as errors" OFF)
# Unity builds: each target's sources are compiled in batches (skilldb_unity
# below), which roughly halves the tree's compile time; OFF compiles every
# source on its own (for tools that want one object per file).
option(SKILLDB_UNITY "Compile each target's C++ sources in batches" ON)
set(SKILLDB_UNITY_BATCH_SIZE 8 CACHE STRING
    "Sources per unity batch (skilldb_unity's default)")
set(SKILLDB_DEPS_DIR "${SKILLDB_ROOT}/.verify-deps" CACHE PATH
    "Fallback headers (include/nlohmann, include/doctest) and cmake/doctest.cmake, for machines without them")

set(SKILLDB_WARNINGS -Wall -Wextra)
# GCC 12 at -O3 reports -Wrestrict inside libstdc++'s string operator+
# (GCC bug 105329, fixed in 13): a false positive, silenced there only.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND SKILLDB_WARNINGS -Wno-restrict)
endif()
if(SKILLDB_WERROR)
  list(APPEND SKILLDB_WARNINGS -Werror)
endif()

# skilldb_strict(target): our warnings on a target of our own sources (never
# on third-party headers, which come in as SYSTEM through their targets).
function(skilldb_strict target)
  # Designated initializers (QueryOptions{.as_of = v}) are the intended way
  # to fill option structs; GCC would flag every field they leave out.
  target_compile_options(${target} PRIVATE ${SKILLDB_WARNINGS}
                         -Wno-missing-field-initializers)
endfunction()

# skilldb_unity(target [BATCH_SIZE n]): compiles the target's .cc sources in
# batches of n through generated files that include them by a path relative
# to the generated file. CMake's own UNITY_BUILD writes absolute paths into
# its batch files, so a compiler cache keyed on a base directory
# (scripts/build.sh) could never reuse them from a clone in another folder.
# Sources with compile definitions or options of their own are compiled
# alone, as are generated ones. Call it after the target has all its sources
# (skilldb_unity_all does, for a whole tree).
function(skilldb_unity target)
  if(NOT SKILLDB_UNITY)
    return()
  endif()
  cmake_parse_arguments(arg "" "BATCH_SIZE" "" ${ARGN})
  set(batch_size ${SKILLDB_UNITY_BATCH_SIZE})
  if(arg_BATCH_SIZE)
    set(batch_size ${arg_BATCH_SIZE})
  endif()
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(batched)
  set(kept)
  foreach(src IN LISTS sources)
    set(alone TRUE)
    if(src MATCHES "\\.cc$" AND NOT src MATCHES "^\\$<")
      get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${source_dir}")
      get_source_file_property(defs "${abs}" TARGET_DIRECTORY ${target} COMPILE_DEFINITIONS)
      get_source_file_property(opts "${abs}" TARGET_DIRECTORY ${target} COMPILE_OPTIONS)
      get_source_file_property(generated "${abs}" TARGET_DIRECTORY ${target} GENERATED)
      if(NOT defs AND NOT opts AND NOT generated)
        list(APPEND batched "${abs}")
        set(alone FALSE)
      endif()
    endif()
    if(alone)
      if(NOT src MATCHES "^\\$<" AND NOT IS_ABSOLUTE "${src}")
        get_filename_component(src "${src}" ABSOLUTE BASE_DIR "${source_dir}")
      endif()
      list(APPEND kept "${src}")
    endif()
  endforeach()
  list(LENGTH batched count)
  if(count LESS 2)
    return()
  endif()
  get_target_property(binary_dir ${target} BINARY_DIR)
  set(out_dir "${binary_dir}/unity/${target}")
  set(batches)
  set(index 0)
  set(in_batch 0)
  set(content "")
  foreach(abs IN LISTS batched)
    file(RELATIVE_PATH rel "${out_dir}" "${abs}")
    string(APPEND content "#include \"${rel}\"\n")
    math(EXPR in_batch "${in_batch} + 1")
    if(in_batch EQUAL batch_size)
      _skilldb_unity_write("${out_dir}/batch_${index}.cc" "${content}")
      list(APPEND batches "${out_dir}/batch_${index}.cc")
      math(EXPR index "${index} + 1")
      set(in_batch 0)
      set(content "")
    endif()
  endforeach()
  if(in_batch GREATER 0)
    _skilldb_unity_write("${out_dir}/batch_${index}.cc" "${content}")
    list(APPEND batches "${out_dir}/batch_${index}.cc")
  endif()
  set_property(TARGET ${target} PROPERTY SOURCES ${kept} ${batches})
  # Generated: a second pass over the target leaves the batches alone.
  set_source_files_properties(${batches} TARGET_DIRECTORY ${target} PROPERTIES GENERATED TRUE)
  # GCC's -Wsubobject-linkage flags a type of an anonymous namespace used in
  # a class of a header; in a batch every source is "a header" of it, so the
  # warning says nothing about the code there.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set_source_files_properties(${batches} TARGET_DIRECTORY ${target} PROPERTIES
                                COMPILE_OPTIONS -Wno-subobject-linkage)
  endif()
endfunction()

# skilldb_unity_all(): skilldb_unity on every target defined under the
# current source directory. Deferred to the end of the top directory (below),
# when every target has all its sources. A target opts out with the target
# property SKILLDB_NO_UNITY.
function(skilldb_unity_all)
  _skilldb_unity_dir("${CMAKE_CURRENT_SOURCE_DIR}")
endfunction()
function(_skilldb_unity_dir dir)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(opt_out ${target} SKILLDB_NO_UNITY)
    if(type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$"
       AND NOT opt_out)
      skilldb_unity(${target})
    endif()
  endforeach()
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _skilldb_unity_dir("${sub}")
  endforeach()
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL skilldb_unity_all)

# Writes a batch file only when its content changes, so reconfiguring does
# not recompile every batch.
function(_skilldb_unity_write path content)
  set(SKILLDB_UNITY_CONTENT "// Generated by skilldb_unity (cmake/skilldb.cmake).\n${content}")
  file(CONFIGURE OUTPUT "${path}" CONTENT "@SKILLDB_UNITY_CONTENT@" @ONLY)
endfunction()

# nlohmann-json from the system, else from SKILLDB_DEPS_DIR/include.
macro(skilldb_find_json)
  if(NOT TARGET nlohmann_json::nlohmann_json)
    find_package(nlohmann_json CONFIG QUIET)
  endif()
  if(NOT TARGET nlohmann_json::nlohmann_json)
    if(NOT EXISTS "${SKILLDB_DEPS_DIR}/include/nlohmann/json.hpp")
      message(FATAL_ERROR "nlohmann-json not found; install it (Debian: nlohmann-json3-dev) "
                          "or copy it to ${SKILLDB_DEPS_DIR}/include/nlohmann")
    endif()
    add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED GLOBAL)
    target_include_directories(nlohmann_json::nlohmann_json SYSTEM INTERFACE
                               "${SKILLDB_DEPS_DIR}/include")
  endif()
endmacro()

# doctest (system, else SKILLDB_DEPS_DIR), ctest, and the shared test main.
# A macro: include(doctest) must define doctest_discover_tests for callers.
macro(skilldb_enable_tests)
  if(SKILLDB_BUILD_TESTS AND NOT TARGET skilldb_test_main)
    find_package(doctest CONFIG QUIET)
    if(doctest_FOUND)
      include(doctest)
    else()
      if(NOT EXISTS "${SKILLDB_DEPS_DIR}/include/doctest/doctest.h")
        message(FATAL_ERROR "doctest not found; install it (Debian: doctest-dev), copy it to "
                            "${SKILLDB_DEPS_DIR}/include/doctest, or set SKILLDB_BUILD_TESTS=OFF")
      endif()
      add_library(doctest::doctest INTERFACE IMPORTED GLOBAL)
      target_include_directories(doctest::doctest SYSTEM INTERFACE
                                 "${SKILLDB_DEPS_DIR}/include")
      include("${SKILLDB_DEPS_DIR}/cmake/doctest.cmake")
    endif()
    enable_testing()
    add_library(skilldb_test_main STATIC "${SKILLDB_ROOT}/tests/test_main.cc")
    target_link_libraries(skilldb_test_main PUBLIC doctest::doctest)
  endif()
endmacro()

# The API layer (api/), when this build has not added it yet (a module
# built on its own).
macro(skilldb_add_api)
  if(NOT TARGET skilldb_api)
    add_subdirectory("${SKILLDB_ROOT}/api" "${CMAKE_BINARY_DIR}/api")
  endif()
endmacro()

# The Backbone interface of llm/ alone (header only): what models/ and the
# trainer's learner need where llm/'s HTTP client (cpp-httplib) is absent.
macro(skilldb_add_llm_interface)
  if(NOT TARGET skilldb_llm_interface)
    add_library(skilldb_llm_interface INTERFACE)
    add_library(skilldb::llm_interface ALIAS skilldb_llm_interface)
    target_include_directories(skilldb_llm_interface INTERFACE "${SKILLDB_ROOT}/llm/include")
    target_link_libraries(skilldb_llm_interface INTERFACE skilldb_api)
  endif()
endmacro()

# skilldb_torch_executable(target): every executable that links libtorch.
# The torch wheel's libtorch_cpu.so exports its own copies of libstdc++
# symbols (std::filesystem::filesystem_error's, among others). Where it comes
# before libstdc++ in an executable's lookup order, libstdc++'s internal
# references bind to those copies and the program crashes on start (seen on
# the GPU machine: skilldb_train segfaulted before main). libstdc++ becomes
# the executable's first needed library, so lookups find its own
# definitions first; with Debian's libtorch it changes nothing.
function(skilldb_torch_executable target)
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_link_options(${target} PRIVATE
      "SHELL:LINKER:--push-state,--no-as-needed -lstdc++ LINKER:--pop-state")
  endif()
endfunction()

# skilldb_test_paths(target NAME PATH [NAME PATH ...]): gives a test (or
# tool) program the paths of this checkout and build it needs, each as the
# macro NAME_REL relative to the program's own directory; tests/build_paths.h
# makes NAME of it (absolute, at run time). Relative values keep the compile
# the same in every clone, so a compiler cache reuses it from a clone in
# another folder. PATH may be $<TARGET_FILE:x>.
function(skilldb_test_paths target)
  set(args ${ARGN})
  set(defs)
  get_target_property(binary_dir ${target} BINARY_DIR)
  while(args)
    list(POP_FRONT args name path)
    if(path MATCHES "^\\$<")
      set(rel "$<PATH:RELATIVE_PATH,${path},$<TARGET_FILE_DIR:${target}>>")
    else()
      file(RELATIVE_PATH rel "${binary_dir}" "${path}")
    endif()
    list(APPEND defs "${name}_REL=\"${rel}\"")
  endwhile()
  target_compile_definitions(${target} PRIVATE ${defs})
  target_include_directories(${target} PRIVATE "${SKILLDB_ROOT}/tests")
endfunction()
