// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The extended attributes of a file's namespace object, read and written by the MDS itself
// (root's credentials, whoever the client is: they are the MDS's, not the file owner's)
// through the sub-FSAL's NFSv4.2 xattr operations. Map_In_Namespace keeps each file's map
// there (map_in_namespace.cpp) and the marks MDSs sharing the namespace leave for each
// other (namespace_marks.cpp). Internal to data_path/.
#pragma once

#include "ganesha/ganesha.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace flexfiles {
struct Export;
}

namespace flexfiles::mds {

// op_ctx's credentials become root's for the scope of the object.
class AsMds {
public:
    AsMds() noexcept;
    ~AsMds();
    AsMds(const AsMds&) = delete;
    AsMds& operator=(const AsMds&) = delete;

private:
    user_cred saved_{};
};

enum class Found { yes, no, error };

// The attribute's value (up to `max` bytes): yes, no (not set), or error (`error` says).
Found get_xattr(Export& exp, fsal_obj_handle* sub, std::string_view name, std::string& value,
                std::string& error, std::size_t max = 4096);
fsal_status_t set_xattr(Export& exp, fsal_obj_handle* sub, std::string_view name,
                        std::string_view value, setxattr_option4 how);
// Removing an attribute that is not there is not an error.
fsal_status_t remove_xattr(Export& exp, fsal_obj_handle* sub, std::string_view name);
// Every attribute name of the object; false (and `error`) when it cannot be listed.
bool list_xattrs(Export& exp, fsal_obj_handle* sub, std::vector<std::string>& names,
                 std::string& error);

// Runs `run` with an op context naming the export: as it is where op_ctx is set (a worker
// thread), otherwise (the FSAL's own threads) with one made for the call. false when the
// export is gone (`run` did not run).
bool in_export_context(Export& exp, const std::function<void()>& run);

// Runs `use` with the sub-FSAL's handle of the object whose host handle (host_handle_of)
// is `host`. Errors: the object is gone (ERR_FSAL_STALE / NOENT), or the FSAL's.
fsal_status_t with_object(Export& exp, const std::vector<std::uint8_t>& host,
                          const std::function<void(fsal_obj_handle*)>& use);

} // namespace flexfiles::mds
