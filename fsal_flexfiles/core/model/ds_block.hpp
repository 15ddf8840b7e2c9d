// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The text AddDataServer takes: one Data_Server block in ganesha.conf's syntax, with or
// without the `Data_Server { ... }` around it, e.g.
//   Id = 4; Address = 127.0.0.5; Export_Path = "/srv/ds4"; NFS_Port = 2049;
// Keys are case-insensitive as in ganesha.conf; `;` or a new line ends a pair; values may
// be quoted. The same keys and defaults as the configuration file (ganesha/config_blocks.c);
// an unknown or repeated key, or a value that is not a number where one is expected, is an
// error. Range and cross-block rules are config::validate()'s (the caller runs it with
// the export's other data servers). Plain C++, no Ganesha header.
#pragma once

#include "model/config.hpp"

#include <string>
#include <string_view>
#include <variant>

namespace flexfiles::mgmt {

// The block, or why it is not one (a message naming the key or the position).
std::variant<config::DataServer, std::string> parse_data_server_block(std::string_view text);

} // namespace flexfiles::mgmt
