// SPDX-License-Identifier: Apache-2.0
import CSnapbackProto

/// `snapback.v1.MetricType`: what a GetMetrics family counts (OpenMetrics' type of the same name).
public enum MetricType: String, Sendable, Equatable, CaseIterable {
    case counter, histogram
}

extension MetricType: ProtoEnum { public typealias Proto = Snapback__V1__MetricType }
