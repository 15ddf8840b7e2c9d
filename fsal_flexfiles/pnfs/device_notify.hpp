// SPDX-License-Identifier: LGPL-3.0-or-later
//
// CB_NOTIFY_DEVICEID (RFC 8881 section 20.12) for the runtime changes of an export's data
// servers (dbus/admin.cpp). GETDEVICEINFO grants CHANGE and DELETE to the clients that ask
// (module.cpp sets fs_info.pnfs_device_notify; Ganesha records the grant per client and
// device, patches 0015 and 0016), so a client caches a device until told otherwise:
//
// - removed: DELETE. RemoveDataServer refuses a data server that still holds data files,
//   so no layout names the device any more, which a DELETE requires (section 20.12.3).
//   Not sent while another FLEXFILES export still lists the same Id: device ids are shared
//   by every export (device_info.cpp), and for that export the device still exists.
// - drained or undrained: CHANGE, ndc_immediate false. Layouts granted before still name
//   the device and its data files stay readable and writable, so it may not be deleted;
//   its ff_device_addr4 is the same, so nothing the client holds becomes wrong (not
//   immediate). The client asks GETDEVICEINFO again when it next uses the device.
//
// Without Ganesha's grant (a core built without patch 0015) nothing is sent.
#pragma once

#include <cstdint>

namespace flexfiles {
struct Export;
}

namespace flexfiles::layout {

void notify_device_removed(Export& exp, std::uint64_t ds_id) noexcept;
void notify_device_drain_changed(Export& exp, std::uint64_t ds_id) noexcept;

} // namespace flexfiles::layout
