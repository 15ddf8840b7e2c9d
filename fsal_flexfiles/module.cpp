// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Registration of the FLEXFILES FSAL with Ganesha (libfsalflexfiles.so,
// loaded for `FSAL { Name = FLEXFILES; }`) and the module-level operations.
#include "dbus/dbus_glue.h"
#include "export.hpp"
#include "handle.hpp"
#include "methods.hpp"
#include "pnfs/layout_ops.hpp"

#include <cstdio>

namespace flexfiles {

Module the_module;

namespace {

constexpr char kFsalName[] = "FLEXFILES";

// Everything is configured per export (EXPORT { FSAL { Name = FLEXFILES; ...
// } }): one module serves exports with different data servers. fs_info stays
// zero (every fs_* export operation answers from the sub-FSAL) but for
// pnfs_device_notify, which GETDEVICEINFO reads from the module.
fsal_status_t init_config(fsal_module* /*fsal_hdl*/, config_file_t /*config_struct*/,
                          config_error_type* /*err_type*/) noexcept {
    LogDebug(COMPONENT_FSAL, "FLEXFILES: FSAL API %d.%d", FSAL_MAJOR_VERSION, FSAL_MINOR_VERSION);
    return fsalstat(ERR_FSAL_NO_ERROR, 0);
}

} // namespace
} // namespace flexfiles

// The module constructor runs inside dlopen(), possibly before this library's
// C++ static initialisation: it must stay C-level (register_fsal, plain
// assignments, fprintf; no iostreams, no C++ object with a constructor).
extern "C" MODULE_INIT void flexfiles_fsal_init(void) {
    using namespace flexfiles;
    fsal_module* fsal = &the_module;

    // FSAL_ID_EXPERIMENTAL: Ganesha's id for out-of-tree pNFS FSALs. Device
    // ids carry it, and GETDEVICEINFO finds this module by it.
    if (register_fsal(fsal, kFsalName, FSAL_MAJOR_VERSION, FSAL_MINOR_VERSION,
                      FSAL_ID_EXPERIMENTAL) != 0) {
        fprintf(stderr, "FLEXFILES: register_fsal failed (module built for FSAL API %d.%d)\n",
                FSAL_MAJOR_VERSION, FSAL_MINOR_VERSION);
        return;
    }
    fsal->m_ops.init_config = init_config;
    fsal->m_ops.create_export = create_export;
    fsal->m_ops.update_export = update_export;
    // pNFS MDS, module level: GETDEVICEINFO and the device address size.
    layout::init_layout_module_ops(fsal->m_ops);
#ifdef FSAL_HAS_PNFS_DEVICE_NOTIFY
    // The data-server changes an administrator makes are announced (pnfs/device_notify.hpp),
    // so GETDEVICEINFO grants clients both notifications and they cache devices.
    fsal->fs_info.pnfs_device_notify = NOTIFY_DEVICEID4_CHANGE_MASK | NOTIFY_DEVICEID4_DELETE_MASK;
#endif

    init_handle_ops(the_module.handle_ops);
}

extern "C" MODULE_FINI void flexfiles_fsal_fini(void) {
    // A registration still waiting for Ganesha's init must not outlive the code it runs.
    ff_mgmt_dbus_stop();
    if (unregister_fsal(&flexfiles::the_module) != 0)
        fprintf(stderr, "FLEXFILES: unregister_fsal failed\n");
    // Handles, maps and snapshots retired with call_rcu are freed by this module's code:
    // every callback must have run before it is unloaded.
    flexfiles::wcc::AttrCache::wait_for_reclaim();
}
