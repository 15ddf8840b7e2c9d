// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The non-template part of SingleFlight (see single_flight.h).
#include "mds/single_flight.hpp"

namespace flexfiles::fallback {

const char* to_string(FlightStatus s) {
    switch (s) {
    case FlightStatus::Ok:
        return "ok";
    case FlightStatus::TimedOut:
        return "timed_out";
    case FlightStatus::Failed:
        return "failed";
    }
    return "?";
}

} // namespace flexfiles::fallback
