// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_harness/flexfiles_config.hpp"

#include <sstream>

namespace flexfiles::harness {

std::string flexfiles_fsal_block(const std::vector<DataServerInfo>& ds,
                                 const FlexfilesOptions& options) {
    std::ostringstream out;
    if (options.attr_expiration_time)
        out << "Attr_Expiration_Time = " << *options.attr_expiration_time << ";\n    ";
    out << "FSAL {\n"
        << "        Name = FLEXFILES;\n"
        << "        " << options.sub_fsal << "\n"
        << "        Mirrors = " << options.mirrors << ";\n";
    auto add = [&](const DataServerInfo& info) {
        out << "        Data_Server {\n"
            << "            Id = " << info.index + 1 << ";\n"
            << "            Address = " << info.address << ";\n"
            << "            NFS_Port = " << info.nfs_port << ";\n"
            << "            MNT_Port = " << info.mnt_port << ";\n"
            << "            Export_Path = " << info.export_path.string() << ";\n"
            << options.data_server_extra << "        }\n";
    };
    if (options.only.empty()) {
        for (const auto& info : ds)
            add(info);
    } else {
        for (unsigned i : options.only)
            add(ds.at(i));
    }
    out << options.extra << "\n    }";
    return out.str();
}

} // namespace flexfiles::harness
