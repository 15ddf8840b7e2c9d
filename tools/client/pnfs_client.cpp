// SPDX-License-Identifier: LGPL-3.0-or-later
#include "pnfs_client.hpp"

#include "nfs4_names.hpp"
#include "xdr_stream.hpp"

#include <cstring>

namespace flexfiles::client {

// ---- PnfsClient ---------------------------------------------------------------------

PnfsClient::PnfsClient(Session& session, PnfsOptions options)
    : session_(session), options_(std::move(options)) {
    if (!options_.trace) {
        options_.trace = session_.options().trace;
    }
    // Both results are a bare status, which the Backchannel fills in.
    session_.set_callback_handler(
        [this](const nfs_cb_argop4& op, nfs_cb_resop4&) { return handle_callback(op); });
}

PnfsClient::~PnfsClient() {
    // Backchannel::set_handler waits for a running handler (same mutex).
    session_.set_callback_handler({});
}

void PnfsClient::trace(const std::string& line) const {
    if (options_.trace) {
        options_.trace(line);
    }
}

FlexDeviceAddr PnfsClient::device(const DeviceId4& id) {
    {
        std::lock_guard lock(devices_mu_);
        auto it = devices_.find(id);
        if (it != devices_.end()) {
            return it->second;
        }
    }
    uint32_t maxcount = options_.getdeviceinfo_maxcount;
    for (int attempt = 0; attempt < 2; ++attempt) {
        Compound c;
        c.getdeviceinfo(id, LAYOUT4_FLEX_FILES, maxcount, options_.device_notify_types);
        CompoundResult r = session_.send(c);
        getdeviceinfo_calls_++;
        if (const auto min = r.getdeviceinfo_mincount(0); min && attempt == 0) {
            maxcount = *min;
            continue;
        }
        r.check("GETDEVICEINFO " + format_deviceid(id));
        FlexDeviceAddr addr = decode_getdeviceinfo(r.getdeviceinfo(0));
        std::lock_guard lock(devices_mu_);
        devices_[id] = addr;
        return addr;
    }
    throw NfsError(NFS4ERR_TOOSMALL, NFS4_OP_GETDEVICEINFO,
                   "GETDEVICEINFO " + format_deviceid(id) + ": still NFS4ERR_TOOSMALL with " +
                       std::to_string(maxcount) + " bytes");
}

void PnfsClient::forget_device(const DeviceId4& id) {
    std::lock_guard lock(devices_mu_);
    devices_.erase(id);
}

std::shared_ptr<nfs3::Client> PnfsClient::data_server(const UniversalAddress& address) {
    const std::string key = address.host + ":" + std::to_string(address.port);
    std::lock_guard lock(servers_mu_);
    auto& slot = servers_[key];
    if (!slot || !slot->is_open()) {
        nfs3::ClientOptions o;
        o.host = address.host;
        o.port = address.port;
        o.timeout = options_.ds_timeout;
        o.connect_timeout = options_.ds_connect_timeout;
        o.label = key;
        o.trace = options_.trace;
        slot = nfs3::Client::connect(std::move(o));
    }
    return slot;
}

std::vector<DeviceNotification> PnfsClient::device_notifications() {
    std::lock_guard lock(devices_mu_);
    return notifications_;
}

nfsstat4 PnfsClient::handle_device_notify(const CB_NOTIFY_DEVICEID4args& args) {
    const auto changes = decode_device_notifications(args);
    if (!changes) {
        trace("<= CB_NOTIFY_DEVICEID that does not decode: NFS4ERR_BADXDR");
        return NFS4ERR_BADXDR;
    }
    std::lock_guard lock(devices_mu_);
    for (const DeviceNotification& n : *changes) {
        devices_.erase(n.deviceid);
        notifications_.push_back(n);
        trace("<= CB_NOTIFY_DEVICEID " + n.describe() + ": device forgotten");
    }
    return NFS4_OK;
}

nfsstat4 PnfsClient::handle_callback(const nfs_cb_argop4& op) {
    if (enum_bits(op.argop) == NFS4_OP_CB_NOTIFY_DEVICEID) {
        return handle_device_notify(op.nfs_cb_argop4_u.opcbnotify_deviceid);
    }
    std::vector<FileHandle> recalled;
    const nfsstat4 status = recalls_.handle(op, recalled);
    const uint32_t opnum = enum_bits(op.argop);
    if (opnum == NFS4_OP_CB_LAYOUTRECALL || opnum == NFS4_OP_CB_RECALL_ANY) {
        trace("<= " + cb_op_name(opnum) + ": " + std::to_string(recalled.size()) +
              " layout(s) marked recalled, " + status_name(status));
    }
    if (options_.on_recall) {
        for (const FileHandle& fh : recalled) {
            options_.on_recall(fh);
        }
    }
    return status;
}

// ---- LayoutRecallTable --------------------------------------------------------------

std::shared_ptr<LayoutRecallTable::Entry> LayoutRecallTable::add(const FileHandle& fh) {
    auto e = std::make_shared<Entry>();
    e->fh = fh;
    std::lock_guard lock(mu_);
    entries_.push_back(e);
    return e;
}

void LayoutRecallTable::remove(const std::shared_ptr<Entry>& e) {
    std::lock_guard lock(mu_);
    std::erase(entries_, e);
}

void LayoutRecallTable::set_layout(Entry& e, const stateid4& stateid, uint32_t iomode) {
    std::lock_guard lock(mu_);
    e.stateid = stateid;
    e.iomode = iomode;
    e.held = true;
    e.recalled = false;
}

stateid4 LayoutRecallTable::stateid(const Entry& e) {
    std::lock_guard lock(mu_);
    return e.stateid;
}

void LayoutRecallTable::clear_layout(Entry& e) {
    std::lock_guard lock(mu_);
    e.held = false;
    e.recalled = false;
}

nfsstat4 LayoutRecallTable::handle(const nfs_cb_argop4& op, std::vector<FileHandle>& recalled) {
    switch (enum_bits(op.argop)) {
    case NFS4_OP_CB_LAYOUTRECALL: {
        const CB_LAYOUTRECALL4args& a = op.nfs_cb_argop4_u.opcblayoutrecall;
        const uint32_t type = enum_bits(a.clora_type);
        const uint32_t iomode = enum_bits(a.clora_iomode);
        const uint32_t how = enum_bits(a.clora_recall.lor_recalltype);
        layout_recalls_++;
        if (type != LAYOUT4_FLEX_FILES ||
            (how != LAYOUTRECALL4_FILE && how != LAYOUTRECALL4_FSID && how != LAYOUTRECALL4_ALL)) {
            return NFS4ERR_NOMATCHING_LAYOUT;
        }
        std::lock_guard lock(mu_);
        std::size_t matched = 0;
        for (const auto& e : entries_) {
            if (!e->held || (iomode != LAYOUTIOMODE4_ANY && iomode != e->iomode)) {
                continue;
            }
            if (how == LAYOUTRECALL4_FILE) {
                const layoutrecall_file4& r = a.clora_recall.layoutrecall4_u.lor_layout;
                const bool same_fh = r.lor_fh.nfs_fh4_len == e->fh.bytes.size() &&
                                     (r.lor_fh.nfs_fh4_len == 0 ||
                                      std::memcmp(r.lor_fh.nfs_fh4_val, e->fh.bytes.data(),
                                                  r.lor_fh.nfs_fh4_len) == 0);
                const bool same_layout = std::memcmp(r.lor_stateid.other, e->stateid.other,
                                                     sizeof(e->stateid.other)) == 0;
                if (!same_fh || !same_layout) {
                    continue;
                }
                // The server bumped the seqid for the recall: LAYOUTRETURN uses it.
                if (r.lor_stateid.seqid > e->stateid.seqid) {
                    e->stateid = r.lor_stateid;
                }
            }
            e->recalled = true;
            recalled.push_back(e->fh);
            ++matched;
        }
        return matched ? NFS4_OK : NFS4ERR_NOMATCHING_LAYOUT;
    }
    case NFS4_OP_CB_RECALL_ANY: {
        const CB_RECALL_ANY4args& a = op.nfs_cb_argop4_u.opcbrecall_any;
        recall_any_++;
        const uint32_t ff_bits =
            (1u << RCA4_TYPE_MASK_FF_LAYOUT_MIN) | (1u << RCA4_TYPE_MASK_FF_LAYOUT_MAX);
        if (a.craa_type_mask.bitmap4_len == 0 || (a.craa_type_mask.map[0] & ff_bits) == 0) {
            return NFS4_OK;
        }
        std::lock_guard lock(mu_);
        std::size_t held = 0;
        for (const auto& e : entries_) {
            held += (e->held && !e->recalled) ? 1 : 0;
        }
        for (const auto& e : entries_) {
            if (held <= a.craa_objects_to_keep) {
                break;
            }
            if (e->held && !e->recalled) {
                e->recalled = true;
                recalled.push_back(e->fh);
                --held;
            }
        }
        return NFS4_OK;
    }
    default:
        return NFS4ERR_NOTSUPP;
    }
}

} // namespace flexfiles::client
