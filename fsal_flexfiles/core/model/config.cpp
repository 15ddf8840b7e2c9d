// SPDX-License-Identifier: LGPL-3.0-or-later
#include "model/config.hpp"

#include <arpa/inet.h>
#include <array>
#include <optional>
#include <sstream>
#include <strings.h>

namespace flexfiles::config {
namespace {

// A numeric address in binary form, so that two spellings of one address
// compare equal.
struct BinaryAddress {
    int family = 0;
    std::array<unsigned char, 16> bytes{};

    bool operator==(const BinaryAddress&) const = default;
};

std::optional<BinaryAddress> parse_address(const std::string& text) {
    BinaryAddress out;
    if (inet_pton(AF_INET, text.c_str(), out.bytes.data()) == 1) {
        out.family = AF_INET;
        return out;
    }
    if (inet_pton(AF_INET6, text.c_str(), out.bytes.data()) == 1) {
        out.family = AF_INET6;
        return out;
    }
    return std::nullopt;
}

// "Data_Server block 2 (Id = 7)": blocks are numbered from 1 in file order.
std::string block_name(std::size_t index, const DataServer& ds) {
    std::ostringstream out;
    out << "Data_Server block " << index + 1;
    if (ds.id != 0)
        out << " (Id = " << ds.id << ")";
    return out.str();
}

// "Mirrors = 4 is out of range (1..3)", after `where` ("" or "Data_Server
// block 2 (Id = 2): ").
template <class T>
void check_in_range(const std::string& where, const char* field, T value, T min, T max,
                    std::vector<std::string>& problems) {
    if (value >= min && value <= max)
        return;
    std::ostringstream out;
    out << where << field << " = " << value << " is out of range (" << min << ".." << max << ")";
    problems.push_back(out.str());
}

void check_id_range(const char* what, const IdRange& range, std::vector<std::string>& problems) {
    const std::string min_name = std::string("Fencing_") + what + "_Min";
    const std::string max_name = std::string("Fencing_") + what + "_Max";
    check_in_range("", min_name.c_str(), range.min, FF_CFG_FENCING_ID_MIN, FF_CFG_FENCING_ID_MAX,
                   problems);
    check_in_range("", max_name.c_str(), range.max, FF_CFG_FENCING_ID_MIN, FF_CFG_FENCING_ID_MAX,
                   problems);
    if (range.min > range.max) {
        std::ostringstream out;
        out << min_name << " (" << range.min << ") is greater than " << max_name << " ("
            << range.max << ")";
        problems.push_back(out.str());
    } else if (range.min == range.max) {
        // Fencing moves a data file to the next id of the range: with one id that is the
        // id the fenced client already holds, and fencing would silently do nothing.
        std::ostringstream out;
        out << min_name << " and " << max_name << " are both " << range.min
            << ": fencing needs at least two ids";
        problems.push_back(out.str());
    }
}

// Fencing_Read_Uid (or the uid derived for it) must be a real id outside the owners' range.
void check_read_uid(const ExportConfig& cfg, std::vector<std::string>& problems) {
    const IdRange& owners = cfg.fencing_uids;
    if (cfg.fencing_read_uid == FF_CFG_FENCING_READ_UID_DERIVED) {
        if (owners.min <= owners.max && read_layout_uid(cfg) == 0) {
            std::ostringstream out;
            out << "Fencing_Uid_Min..Fencing_Uid_Max (" << owners.min << ".." << owners.max
                << ") leaves no uid outside it for READ layouts: set Fencing_Read_Uid";
            problems.push_back(out.str());
        }
        return;
    }
    check_in_range("", "Fencing_Read_Uid", cfg.fencing_read_uid, FF_CFG_FENCING_ID_MIN,
                   FF_CFG_FENCING_ID_MAX, problems);
    if (cfg.fencing_read_uid >= owners.min && cfg.fencing_read_uid <= owners.max) {
        std::ostringstream out;
        out << "Fencing_Read_Uid = " << cfg.fencing_read_uid << " lies in Fencing_Uid_Min.."
            << "Fencing_Uid_Max (" << owners.min << ".." << owners.max
            << "): a fencing could make it a data file's owner, and READ layouts could write";
        problems.push_back(out.str());
    }
}

} // namespace

uint32_t read_layout_uid(const ExportConfig& cfg) {
    if (cfg.fencing_read_uid != FF_CFG_FENCING_READ_UID_DERIVED)
        return cfg.fencing_read_uid;
    const IdRange& owners = cfg.fencing_uids;
    if (owners.max < FF_CFG_FENCING_ID_MAX)
        return owners.max + 1;
    if (owners.min > FF_CFG_FENCING_ID_MIN)
        return owners.min - 1;
    return 0;
}

std::string DataServer::endpoint() const {
    std::ostringstream out;
    if (address.find(':') != std::string::npos)
        out << '[' << address << "]:" << nfs_port;
    else
        out << address << ':' << nfs_port;
    return out.str();
}

ExportConfig from_parsed(const ff_cfg_export& parsed) {
    ExportConfig cfg;
    if (parsed.sub_fsal_name != nullptr)
        cfg.sub_fsal = parsed.sub_fsal_name;
    for (const ff_cfg_data_server* p = parsed.data_servers; p != nullptr; p = p->next) {
        DataServer ds;
        ds.id = p->id;
        if (p->address != nullptr)
            ds.address = p->address;
        ds.nfs_port = p->nfs_port;
        ds.mnt_port = p->mnt_port;
        if (p->export_path != nullptr)
            ds.export_path = p->export_path;
        ds.rsize = p->rsize;
        ds.wsize = p->wsize;
        cfg.data_servers.push_back(std::move(ds));
    }
    cfg.mirrors = parsed.mirrors;
    cfg.stripe_unit = parsed.stripe_unit;
    cfg.fencing_uids = {parsed.fencing_uid_min, parsed.fencing_uid_max};
    cfg.fencing_gids = {parsed.fencing_gid_min, parsed.fencing_gid_max};
    cfg.fencing_read_uid = parsed.fencing_read_uid;
    cfg.trust_wcc = parsed.trust_wcc;
    cfg.wcc_max_age = std::chrono::milliseconds(parsed.wcc_max_age_ms);
    cfg.wcc_max_ctime_skew = std::chrono::seconds(parsed.wcc_max_ctime_skew_s);
    cfg.ds_getattr_deadline = std::chrono::milliseconds(parsed.ds_getattr_deadline_ms);
    cfg.ds_io_timeout = std::chrono::milliseconds(parsed.ds_io_timeout_ms);
    cfg.ds_direct_connections = parsed.ds_direct_connections;
    cfg.ds_direct_spin = std::chrono::microseconds(parsed.ds_direct_spin_us);
    cfg.resilver_recall_after = std::chrono::milliseconds(parsed.resilver_recall_after_ms);
    if (parsed.layout_store != nullptr)
        cfg.layout_store = parsed.layout_store;
    cfg.map_in_namespace = parsed.map_in_namespace;
    return cfg;
}

std::vector<std::string> validate(const ExportConfig& cfg) {
    std::vector<std::string> problems;

    if (cfg.sub_fsal.empty())
        problems.push_back("the nested FSAL block naming the metadata FSAL (e.g. FSAL { Name = "
                           "VFS; }) is missing");
    else if (strcasecmp(cfg.sub_fsal.c_str(), "FLEXFILES") == 0)
        problems.push_back("the nested FSAL block names FLEXFILES: FLEXFILES cannot stack on "
                           "itself");

    // Per block, then against the blocks before it (so that each duplicate is
    // reported once, at its second occurrence).
    std::vector<std::optional<BinaryAddress>> addresses;
    for (std::size_t i = 0; i < cfg.data_servers.size(); ++i) {
        const DataServer& ds = cfg.data_servers[i];
        const std::string where = block_name(i, ds) + ": ";

        if (ds.id == 0)
            problems.push_back(where + "Id is missing (it names the device in layouts and must "
                                       "not change across restarts)");
        if (ds.address.empty())
            problems.push_back(where + "Address is missing");
        addresses.push_back(ds.address.empty() ? std::nullopt : parse_address(ds.address));
        if (!ds.address.empty() && !addresses.back())
            problems.push_back(where + "Address = \"" + ds.address +
                               "\" is not a numeric IPv4 or IPv6 address");
        check_in_range<uint32_t>(where, "NFS_Port", ds.nfs_port, FF_CFG_PORT_MIN, UINT16_MAX,
                                 problems);
        check_in_range<uint32_t>(where, "MNT_Port", ds.mnt_port, FF_CFG_PORT_MIN, UINT16_MAX,
                                 problems);
        if (ds.export_path.empty())
            problems.push_back(where + "Export_Path is missing");
        else if (ds.export_path.front() != '/')
            problems.push_back(where + "Export_Path = \"" + ds.export_path +
                               "\" is not an absolute path");
        check_in_range(where, "Rsize", ds.rsize, FF_CFG_IO_SIZE_MIN, FF_CFG_IO_SIZE_MAX, problems);
        check_in_range(where, "Wsize", ds.wsize, FF_CFG_IO_SIZE_MIN, FF_CFG_IO_SIZE_MAX, problems);

        for (std::size_t j = 0; j < i; ++j) {
            const DataServer& other = cfg.data_servers[j];
            if (ds.id != 0 && ds.id == other.id)
                problems.push_back(where + "Id = " + std::to_string(ds.id) +
                                   " is already used by Data_Server block " +
                                   std::to_string(j + 1));
            if (addresses[i] && addresses[j] && *addresses[i] == *addresses[j] &&
                ds.nfs_port == other.nfs_port)
                problems.push_back(where + "Address:NFS_Port " + ds.endpoint() +
                                   " is already used by " + block_name(j, other));
        }
    }

    check_in_range("", "Mirrors", cfg.mirrors, FF_CFG_MIRRORS_MIN, FF_CFG_MIRRORS_MAX, problems);
    if (cfg.mirrors > cfg.data_servers.size())
        problems.push_back("Mirrors = " + std::to_string(cfg.mirrors) + " exceeds the number of " +
                           "Data_Server blocks (" + std::to_string(cfg.data_servers.size()) +
                           "): each mirror of a file needs its own data server");

    check_in_range<uint64_t>("", "Stripe_Unit", cfg.stripe_unit, FF_CFG_STRIPE_UNIT_MIN,
                             FF_CFG_STRIPE_UNIT_MAX, problems);
    check_id_range("Uid", cfg.fencing_uids, problems);
    check_id_range("Gid", cfg.fencing_gids, problems);
    check_read_uid(cfg, problems);
    check_in_range<int64_t>("", "WCC_Max_Age", cfg.wcc_max_age.count(), 0,
                            FF_CFG_WCC_MAX_AGE_MS_MAX, problems);
    check_in_range<int64_t>("", "WCC_Max_Ctime_Skew", cfg.wcc_max_ctime_skew.count(), 0,
                            FF_CFG_WCC_MAX_CTIME_SKEW_S_MAX, problems);
    check_in_range<int64_t>("", "DS_Getattr_Deadline", cfg.ds_getattr_deadline.count(),
                            FF_CFG_DS_GETATTR_DEADLINE_MS_MIN, FF_CFG_DS_GETATTR_DEADLINE_MS_MAX,
                            problems);
    check_in_range<int64_t>("", "DS_IO_Timeout", cfg.ds_io_timeout.count(),
                            FF_CFG_DS_IO_TIMEOUT_MS_MIN, FF_CFG_DS_IO_TIMEOUT_MS_MAX, problems);
    check_in_range<int64_t>("", "DS_Direct_Connections", cfg.ds_direct_connections, 0,
                            int64_t{FF_CFG_DS_DIRECT_CONNECTIONS_MAX}, problems);
    check_in_range<int64_t>("", "DS_Direct_Spin", cfg.ds_direct_spin.count(), 0,
                            int64_t{FF_CFG_DS_DIRECT_SPIN_US_MAX}, problems);
    check_in_range<int64_t>("", "Resilver_Recall_After", cfg.resilver_recall_after.count(), 0,
                            int64_t{FF_CFG_RESILVER_RECALL_AFTER_MS_MAX}, problems);
    if (!cfg.layout_store.empty() && cfg.layout_store.front() != '/')
        problems.push_back("Layout_Store = \"" + cfg.layout_store + "\" is not an absolute path");
    return problems;
}

std::string layout_store_path(const ExportConfig& cfg, int export_id,
                              const std::string& state_dir) {
    if (!cfg.layout_store.empty())
        return cfg.layout_store;
    std::string dir = state_dir;
    while (dir.size() > 1 && dir.back() == '/')
        dir.pop_back();
    return dir + "/" FF_CFG_LAYOUT_STORE_SUBDIR "/export-" + std::to_string(export_id) + ".db";
}

std::string describe(const ExportConfig& cfg) {
    std::ostringstream out;
    out << "metadata FSAL " << cfg.sub_fsal << ", " << cfg.data_servers.size()
        << " data server(s) [";
    for (std::size_t i = 0; i < cfg.data_servers.size(); ++i) {
        const DataServer& ds = cfg.data_servers[i];
        out << (i == 0 ? "" : ", ") << ds.id << '=' << ds.endpoint() << ds.export_path;
    }
    out << "], Mirrors = " << cfg.mirrors << ", Stripe_Unit = " << cfg.stripe_unit
        << ", Fencing uids " << cfg.fencing_uids.min << '-' << cfg.fencing_uids.max << " gids "
        << cfg.fencing_gids.min << '-' << cfg.fencing_gids.max << ", READ layouts uid "
        << read_layout_uid(cfg) << ", Trust_WCC = " << (cfg.trust_wcc ? "true" : "false")
        << ", WCC_Max_Age = " << cfg.wcc_max_age.count()
        << " ms, WCC_Max_Ctime_Skew = " << cfg.wcc_max_ctime_skew.count()
        << " s, DS_Getattr_Deadline = " << cfg.ds_getattr_deadline.count()
        << " ms, DS_IO_Timeout = " << cfg.ds_io_timeout.count()
        << " ms, DS_Direct_Connections = " << cfg.ds_direct_connections
        << ", DS_Direct_Spin = " << cfg.ds_direct_spin.count()
        << " us, Resilver_Recall_After = " << cfg.resilver_recall_after.count()
        << " ms, Layout_Store = "
        << (cfg.layout_store.empty() ? std::string("(default)") : cfg.layout_store)
        << ", Map_In_Namespace = " << (cfg.map_in_namespace ? "true" : "false");
    return out.str();
}

} // namespace flexfiles::config
