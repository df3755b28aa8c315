# The project's Python (pass -DPython3_EXECUTABLE=.venv/bin/python, or
# FindPython picks whatever python3 comes first on PATH) and the pybind11
# installed in it. `components`: the Python3 components to require.
macro(flyrt_find_python components)
    find_package(Python3 3.10 REQUIRED COMPONENTS Interpreter ${components})
    execute_process(
        COMMAND "${Python3_EXECUTABLE}" -c "import pybind11; print(pybind11.get_cmake_dir())"
        OUTPUT_VARIABLE pybind11_DIR OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
    find_package(pybind11 CONFIG REQUIRED)
    # Where Python packages go below the install prefix (the venv when installed there).
    set(XFLYDSL_PYTHON_SITE_DIR
        "lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages"
        CACHE STRING "site-packages below the install prefix")
endmacro()
