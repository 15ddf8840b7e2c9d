// SPDX-License-Identifier: LGPL-3.0-or-later
#include "ff_harness/cluster.hpp"

#include <stdexcept>

namespace fs = std::filesystem;

namespace flexfiles::harness {

namespace {
constexpr unsigned kMdsHost = 1;
constexpr unsigned kFirstDsHost = 10;
constexpr std::uint16_t kMdsExportId = 1;
constexpr std::uint16_t kFirstDsExportId = 100;
} // namespace

std::string DataServerInfo::nfs3_url() const {
    return "nfs://" + address + export_path.string() + "?nfsport=" + std::to_string(nfs_port) +
           "&mountport=" + std::to_string(mnt_port);
}

Cluster::Cluster(ClusterOptions options)
    : options_(std::move(options)), block_(AddressBlock::acquire()),
      dir_(test_work_dir() / "cluster") {
    if (options_.data_servers > 254 - kFirstDsHost)
        throw std::invalid_argument("Cluster: too many data servers");
    fresh_dir(dir_);
    if (options_.with_dbus)
        dbus_ = std::make_unique<DbusDaemon>(dir_ / "dbus");

    for (unsigned i = 0; i < options_.data_servers; ++i) {
        DataServerInfo info;
        info.index = i;
        info.name = "ds" + std::to_string(i + 1);
        info.address = block_.address(kFirstDsHost + i);
        info.export_id = static_cast<std::uint16_t>(kFirstDsExportId + i);
        info.export_path = dir_ / info.name / "export";
        info_.push_back(info);
    }
    for (const auto& info : info_) {
        ServerOptions o = ServerOptions::data_server(info.name, info.address, info.export_id);
        o.nfs_port = info.nfs_port;
        o.mnt_port = info.mnt_port;
        o.exports[0].path = info.export_path;
        if (dbus_) {
            o.dbus_address = dbus_->address();
            o.dbus_name_prefix = info.name;
        }
        if (options_.configure_ds)
            options_.configure_ds(o, info);
        data_servers_.push_back(std::make_unique<GaneshaServer>(o, dir_ / info.name));
    }
    if (options_.start_mds)
        start_mds();
}

Cluster::~Cluster() {
    // MDS first: it may hold connections to the data servers.
    mds_.reset();
    data_servers_.clear();
}

GaneshaServer& Cluster::start_mds(
    std::function<void(ServerOptions&, const std::vector<DataServerInfo>&)> configure) {
    if (mds_)
        throw std::logic_error("Cluster: the MDS is already started");
    ServerOptions o = ServerOptions::metadata_server("mds", block_.address(kMdsHost), kMdsExportId);
    if (dbus_)
        o.dbus_address = dbus_->address();
    if (configure)
        configure(o, info_);
    else if (options_.configure_mds)
        options_.configure_mds(o, info_);
    mds_ = std::make_unique<GaneshaServer>(o, dir_ / "mds");
    return *mds_;
}

GaneshaServer& Cluster::mds() {
    if (!mds_)
        throw std::logic_error("Cluster: no MDS was started");
    return *mds_;
}

GaneshaServer& Cluster::ds(unsigned index) {
    if (index >= data_servers_.size())
        throw std::out_of_range("Cluster: no data server " + std::to_string(index) + " (have " +
                                std::to_string(data_servers_.size()) + ")");
    return *data_servers_[index];
}

std::vector<GaneshaServer*> Cluster::servers() {
    std::vector<GaneshaServer*> all;
    for (auto& s : data_servers_)
        all.push_back(s.get());
    if (mds_)
        all.push_back(mds_.get());
    return all;
}

} // namespace flexfiles::harness
