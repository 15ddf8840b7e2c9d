// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The write verifier a FLEXFILES export gives NFSv4 clients (export op get_write_verifier),
// so that the MDS may forward their UNSTABLE writes UNSTABLE to the data servers.
//
// A client keeps the data of an UNSTABLE WRITE until a COMMIT answers with the verifier its
// WRITE got; a different one tells it the server may have lost the data, and it sends the
// WRITE again (RFC 8881 section 18.32.3). Data the MDS forwarded UNSTABLE is lost when a
// data server restarts before committing it, and that data server then answers with a new
// verifier of its own. So the export's verifier is a random base (a new one per export
// instance: an MDS restart changes it) combined with a generation that moves whenever a
// data server answers a WRITE or COMMIT with another verifier than it gave before.
// Ganesha's NFSv4 WRITE and COMMIT ask for the verifier after the FSAL's call, so the reply
// that saw the change already carries the new one.
//
// A data server's own verifier must change when it restarts: Ganesha's is its start time
// in whole seconds (nfs_ServerEpoch), so a Ganesha data server that restarts within the
// second it started in cannot be told apart, by the MDS or by any other client.
//
// NFSv3 has one server-wide verifier (Ganesha's NFS3_write_verifier, no FSAL hook): NFSv3
// writes through the MDS stay FILE_SYNC.
#pragma once

#include "fleet/ds_types.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>

namespace flexfiles::mds {

class ExportWriteVerifier {
public:
    using Bytes = std::array<std::uint8_t, 8>;

    explicit ExportWriteVerifier(Bytes base);
    // A random base (std::random_device).
    ExportWriteVerifier();

    Bytes current() const noexcept;
    std::uint64_t generation() const noexcept {
        return generation_.load(std::memory_order_acquire);
    }

    // Data server ds_id answered a WRITE or COMMIT with `v`. True when it gave another one
    // before: its unstable data may be gone, and the export's verifier has moved.
    bool observe(std::uint64_t ds_id, const fleet::WriteVerifier& v);

private:
    const Bytes base_;
    std::atomic<std::uint64_t> generation_{0};
    std::mutex mu_;
    std::map<std::uint64_t, fleet::WriteVerifier> seen_; // guarded by mu_
};

} // namespace flexfiles::mds
