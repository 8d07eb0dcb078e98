package dev.eddy.trends;

import java.time.Instant;

/**
 * Events of one name in one hour of one project.
 *
 * @param event event name
 * @param hour  start of the hour (UTC)
 * @param count number of events
 */
public record HourlyCount(String event, Instant hour, long count) {
}
