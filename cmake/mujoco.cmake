# BIGSTEP_MUJOCO=AUTO|ON|OFF: MJCF / URDF import through MuJoCo's own compiler (libmujoco from the
# PyPI `mujoco` package, found through Python). Defines the IMPORTED target bigstep_mujoco::mujoco
# and BIGSTEP_HAVE_MUJOCO; without it io/mjcf_import.cpp throws "built without MuJoCo".
set(BIGSTEP_MUJOCO AUTO CACHE STRING "Import MJCF/URDF through libmujoco (pip mujoco): AUTO|ON|OFF")
set_property(CACHE BIGSTEP_MUJOCO PROPERTY STRINGS AUTO ON OFF)
set(BIGSTEP_HAVE_MUJOCO OFF)
if(NOT BIGSTEP_MUJOCO STREQUAL "OFF")
  find_package(Python3 COMPONENTS Interpreter QUIET)
  set(_mj_dir "")
  if(Python3_Interpreter_FOUND)
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import mujoco, os; print(os.path.dirname(mujoco.__file__))"
                    OUTPUT_VARIABLE _mj_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  # the wheel ships libmujoco.so.X.Y.Z only (no unversioned .so)
  set(_mj_lib "")
  if(_mj_dir)
    file(GLOB _mj_lib "${_mj_dir}/libmujoco.so.*")
  endif()
  if(_mj_lib AND EXISTS "${_mj_dir}/include/mujoco/mujoco.h")
    list(GET _mj_lib 0 _mj_lib)
    add_library(bigstep_mujoco::mujoco SHARED IMPORTED)
    set_target_properties(bigstep_mujoco::mujoco PROPERTIES
      IMPORTED_LOCATION "${_mj_lib}"
      INTERFACE_INCLUDE_DIRECTORIES "${_mj_dir}/include")
    set(BIGSTEP_HAVE_MUJOCO ON)
    message(STATUS "bigstep: MuJoCo import ON (${_mj_lib})")
  elseif(BIGSTEP_MUJOCO STREQUAL "ON")
    message(FATAL_ERROR "BIGSTEP_MUJOCO=ON but python3 cannot import mujoco (pip install mujoco)")
  else()
    message(STATUS "bigstep: MuJoCo import OFF (python3 cannot import mujoco: pip install mujoco)")
  endif()
else()
  message(STATUS "bigstep: MuJoCo import OFF (BIGSTEP_MUJOCO=OFF)")
endif()
