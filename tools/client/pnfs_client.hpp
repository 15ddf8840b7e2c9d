// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The pNFS side of a flex-files client session (RFC 8435), shared by its open files
// (flex_file.hpp):
//
//   PnfsClient pnfs(*session);           // installs the backchannel handler
//   FlexDeviceAddr d = pnfs.device(id);  // GETDEVICEINFO, once per device id
//   auto ds = pnfs.data_server(d.tcp_address()); // one NFSv3 connection per address
//
// Device notifications: GETDEVICEINFO asks for PnfsOptions::device_notify_types (none by
// default); a CB_NOTIFY_DEVICEID is answered NFS4_OK, each of its changes drops the device
// from the cache (the next device() asks again) and is kept in device_notifications();
// one that does not decode is answered NFS4ERR_BADXDR.
//
// Recalls: PnfsClient answers CB_LAYOUTRECALL on the session's backchannel (NFS4_OK and
// the layout marked recalled when it matches a held layout, else
// NFS4ERR_NOMATCHING_LAYOUT) and CB_RECALL_ANY (NFS4_OK; flex-files layouts over the
// number to keep are marked recalled). The layouts it matches against are the ones its
// FlexFiles registered in recalls(); their owners see the mark and return the layout.
#pragma once

#include "compound.hpp"
#include "device_notify.hpp"
#include "flex_layout.hpp"
#include "nfs3.hpp"
#include "session.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace flexfiles::client {

struct PnfsOptions {
    std::chrono::milliseconds ds_timeout{10000}; // per NFSv3 call
    std::chrono::milliseconds ds_connect_timeout{5000};
    uint32_t io_size = 1u << 20;   // NFSv3 READ/WRITE size, capped by rsize/wsize
    unsigned chunks_in_flight = 4; // per data file
    uint32_t layoutget_maxcount = 64u << 10;
    uint32_t getdeviceinfo_maxcount = 4096;
    // gdia_notify_types of GETDEVICEINFO (kNotifyDeviceChange | kNotifyDeviceDelete is what
    // the Linux client asks for).
    uint32_t device_notify_types = 0;
    // How ff_iostats4 counts are encoded in LAYOUTRETURN (see flex_layout.hpp).
    IoInfoCount iostats_counts = IoInfoCount::rfc7862_u64;
    // Trace lines of the NFSv3 calls; empty: the session's trace.
    std::function<void(const std::string&)> trace;
    // Called on the receive thread when a held layout is recalled (must not block).
    std::function<void(const FileHandle&)> on_recall;
};

// The layouts a client holds, as the server's recalls see them: CB_LAYOUTRECALL matches a
// held flex-files layout by iomode and (FILE) filehandle and layout stateid, or (FSID,
// ALL) every held layout; CB_RECALL_ANY with a flex-files bit in its mask recalls the
// layouts beyond the number to keep. Matching layouts are marked recalled; nothing is sent
// from here (callbacks run on the receive thread).
class LayoutRecallTable {
public:
    struct Entry {
        FileHandle fh;
        stateid4 stateid{}; // the layout stateid while held (a FILE recall's lor_stateid
                            // replaces it: RFC 8881 section 18.44.3 returns with that one)
        uint32_t iomode = 0;
        bool held = false;
        std::atomic<bool> recalled{false};
    };

    std::shared_ptr<Entry> add(const FileHandle& fh);
    void remove(const std::shared_ptr<Entry>& e);
    void set_layout(Entry& e, const stateid4& stateid, uint32_t iomode);
    void clear_layout(Entry& e);
    stateid4 stateid(const Entry& e); // under the table's lock

    // The status for CB_LAYOUTRECALL / CB_RECALL_ANY (NFS4ERR_NOTSUPP for other ops);
    // appends the filehandles of the layouts it marked recalled.
    nfsstat4 handle(const nfs_cb_argop4& op, std::vector<FileHandle>& recalled);

    uint64_t layout_recalls() const { return layout_recalls_.load(); }
    uint64_t recall_any_calls() const { return recall_any_.load(); }

private:
    std::mutex mu_;
    std::vector<std::shared_ptr<Entry>> entries_;
    std::atomic<uint64_t> layout_recalls_{0};
    std::atomic<uint64_t> recall_any_{0};
};

class PnfsClient {
public:
    // Installs the backchannel handler on `session` (replacing any other).
    explicit PnfsClient(Session& session, PnfsOptions options = {});
    ~PnfsClient();
    PnfsClient(const PnfsClient&) = delete;
    PnfsClient& operator=(const PnfsClient&) = delete;

    Session& session() { return session_; }
    const PnfsOptions& options() const { return options_; }

    // GETDEVICEINFO, once per device id (NFS4ERR_TOOSMALL is retried with the server's
    // gdir_mincount). Throws NfsError / TransportError / XdrError.
    FlexDeviceAddr device(const DeviceId4& id);
    void forget_device(const DeviceId4& id);
    uint64_t getdeviceinfo_calls() const { return getdeviceinfo_calls_.load(); }
    // The CB_NOTIFY_DEVICEID changes received so far, oldest first.
    std::vector<DeviceNotification> device_notifications();

    // The connection to the NFSv3 server at `address` (made on first use, and again when
    // it was lost; a caller keeps the one it got alive). Throws TransportError.
    std::shared_ptr<nfs3::Client> data_server(const UniversalAddress& address);

    uint64_t layout_recalls() const { return recalls_.layout_recalls(); }
    uint64_t recall_any_calls() const { return recalls_.recall_any_calls(); }
    LayoutRecallTable& recalls() { return recalls_; }

private:
    nfsstat4 handle_callback(const nfs_cb_argop4& op);
    nfsstat4 handle_device_notify(const CB_NOTIFY_DEVICEID4args& args);
    void trace(const std::string& line) const;

    Session& session_;
    PnfsOptions options_;
    std::mutex devices_mu_;
    std::map<DeviceId4, FlexDeviceAddr> devices_;
    std::vector<DeviceNotification> notifications_; // under devices_mu_
    std::mutex servers_mu_;
    std::map<std::string, std::shared_ptr<nfs3::Client>> servers_;
    LayoutRecallTable recalls_;
    std::atomic<uint64_t> getdeviceinfo_calls_{0};
};

} // namespace flexfiles::client
