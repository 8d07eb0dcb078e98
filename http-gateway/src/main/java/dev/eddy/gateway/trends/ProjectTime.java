package dev.eddy.gateway.trends;

import dev.eddy.gateway.projects.Project;
import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.ZoneId;

/** A project's calendar: the time zone its trends and funnels bucket in, and the day its weeks start. */
record ProjectTime(ZoneId zone, DayOfWeek weekStart) {

    /** @throws IllegalArgumentException when the project's time zone is not a valid IANA zone */
    static ProjectTime of(final Project project) {
        try {
            return new ProjectTime(ZoneId.of(project.timezone()), project.weekStartDay() == 1 ? DayOfWeek.MONDAY : DayOfWeek.SUNDAY);
        } catch (final DateTimeException e) {
            throw new IllegalArgumentException("The project's timezone '" + project.timezone() + "' is not valid.", e);
        }
    }
}
