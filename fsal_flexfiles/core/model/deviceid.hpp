// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The pNFS deviceid4 (16 bytes) that names one data server in flexible-file layouts.
//
// It is a pure function of the configured data-server Id, so it is the same across MDS
// restarts and on every MDS that shares the configuration. Layout (byte offsets):
//
//   0      fsal_id  Ganesha dispatches GETDEVICEINFO on this byte (struct pnfs_deviceid's
//                   fsal_id); default 1 = FSAL_ID_EXPERIMENTAL
//   1      version  format version, 1
//   2..3   magic    'F' 'F' (0x46 0x46)
//   4..7   zero     reserved
//   8..15  id       the data server's configured Id, unsigned 64-bit big-endian
//
// Example: Id 2 -> 01 01 46 46 00 00 00 00 00 00 00 00 00 00 00 02
// ("0101464600000000 0000000000000002" in logs).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace flexfiles::fleet {

using DeviceId = std::array<std::uint8_t, 16>;

inline constexpr std::uint8_t kDefaultFsalId = 1; // Ganesha's FSAL_ID_EXPERIMENTAL
inline constexpr std::uint8_t kDeviceIdVersion = 1;

DeviceId make_deviceid(std::uint64_t ds_id, std::uint8_t fsal_id = kDefaultFsalId) noexcept;

// The data-server Id inside a deviceid of our format (any fsal_id), or std::nullopt when the
// version, magic or reserved bytes do not match.
std::optional<std::uint64_t> deviceid_ds_id(const DeviceId& dev) noexcept;

// Copies 16 raw bytes (e.g. an XDR deviceid4); std::nullopt for any other size.
std::optional<DeviceId> deviceid_from_bytes(const void* bytes, std::size_t size) noexcept;

// 32 lowercase hex digits.
std::string deviceid_hex(const DeviceId& dev);

} // namespace flexfiles::fleet
