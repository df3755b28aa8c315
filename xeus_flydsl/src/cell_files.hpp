// Where a cell's code "lives": one file per distinct cell text, named by a
// hash of the text, so that a debugger's breakpoints (set on the file the
// `dumpCell` request writes) match the code the shell compiled under the
// same name (xeus's Murmur2 scheme, which JupyterLab computes too).
#pragma once

#include <string>

namespace xflydsl
{

// The folder of this process's cell files, ending with '/'.
std::string cell_file_folder();

// The file name cells with this exact text are compiled under.
std::string cell_file(const std::string& code);

} // namespace xflydsl
