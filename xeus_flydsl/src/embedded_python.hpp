// Starts the CPython of the project's virtual environment inside the kernel.
//
// pybind11's default start takes sys.executable from PATH; the kernel must
// run the environment's interpreter (its sys.prefix, its site-packages)
// whatever PATH the client started it with.
#pragma once

#include <memory>
#include <string>

#include <pybind11/embed.h>

namespace xflydsl
{

// `python_executable`: the environment's `bin/python`; `argv0` becomes sys.argv[0].
std::unique_ptr<pybind11::scoped_interpreter> start_python(const std::string& python_executable,
                                                           const std::string& argv0);

} // namespace xflydsl
