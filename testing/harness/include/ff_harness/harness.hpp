// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The real-process test harness: everything a test needs in one include.
#pragma once

#include "ff_harness/cluster.hpp"
#include "ff_harness/dbus_daemon.hpp"
#include "ff_harness/flexfiles_config.hpp"
#include "ff_harness/ganesha_server.hpp"
#include "ff_harness/nfs3_client.hpp"
#include "ff_harness/process.hpp"
#include "ff_harness/rpc_ping.hpp"
#include "ff_harness/work_dir.hpp"
