package dev.eddy.flags;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * Evaluates a flag for one user (or group) as PostHog does: condition groups in order, each matching when all its
 * property filters match and the id's rollout hash is within its percentage; the first match decides, and its
 * variant is the condition's override (when it names a real variant) or the one the variant hash falls in.
 */
public final class FlagEvaluator {
    private FlagEvaluator() {
    }

    /**
     * Who the flag is evaluated for.
     *
     * @param distinctId         the user
     * @param personProperties   the person's properties, request overrides applied
     * @param groups             group type name to group key, from the request
     * @param groupProperties    group type name to its properties
     * @param groupTypes         group type index to name, the project's mapping
     * @param now                evaluation time, for relative date filters
     */
    public record Subject(String distinctId, ObjectNode personProperties, Map<String, String> groups,
                          Map<String, ObjectNode> groupProperties, Map<Integer, String> groupTypes, Instant now,
                          java.util.function.LongFunction<Optional<Boolean>> inCohort) {

        /** A subject of no cohort's (a project without cohorts). */
        public Subject(final String distinctId, final ObjectNode personProperties, final Map<String, String> groups,
                       final Map<String, ObjectNode> groupProperties, final Map<Integer, String> groupTypes, final Instant now) {
            this(distinctId, personProperties, groups, groupProperties, groupTypes, now, id -> Optional.empty());
        }

        /** The same subject, its rollout and variant hashed with {@code hashKey} (experience continuity). */
        public Subject hashedAs(final String hashKey) {
            return new Subject(hashKey, personProperties, groups, groupProperties, groupTypes, now, inCohort);
        }
    }

    /**
     * The outcome, in the terms of PostHog's {@code /flags} response.
     *
     * @param reason         {@code condition_match}, {@code no_condition_match}, {@code out_of_rollout_bound},
     *                       {@code no_group_type}, {@code flag_disabled}
     * @param conditionIndex the condition that decided, 0-based, if any
     * @param payload        the payload of the value, if the flag has one
     */
    public record Result(String key, boolean enabled, Optional<String> variant, String reason, Optional<Integer> conditionIndex,
                         Optional<JsonNode> payload) {

        /** The value SDKs see: the variant, else true or false. */
        public Object value() {
            return variant.<Object>map(v -> v).orElse(enabled);
        }

        public String description() {
            return switch (reason) {
                case "condition_match" -> "Matched condition set " + (conditionIndex.orElse(0) + 1);
                case "out_of_rollout_bound" -> "Out of rollout bound";
                case "no_group_type" -> "No group for the flag's group type";
                case "flag_disabled" -> "Flag is disabled";
                default -> "No matching condition set";
            };
        }
    }

    public static Result evaluate(final FlagDefinition flag, final Subject subject) {
        if (!flag.active() || flag.deleted()) {
            return new Result(flag.key(), false, Optional.empty(), "flag_disabled", Optional.empty(), Optional.empty());
        }
        String hashId = subject.distinctId();
        ObjectNode properties = subject.personProperties();
        if (flag.aggregationGroup().isPresent()) {
            final String type = subject.groupTypes().get(flag.aggregationGroup().get());
            final String groupKey = type == null ? null : subject.groups().get(type);
            if (groupKey == null) {
                return new Result(flag.key(), false, Optional.empty(), "no_group_type", Optional.empty(), Optional.empty());
            }
            hashId = groupKey;
            properties = subject.groupProperties().get(type);
        }
        boolean outOfRollout = false;
        for (int i = 0; i < flag.conditions().size(); i++) {
            final FlagDefinition.Condition condition = flag.conditions().get(i);
            if (!allMatch(condition, properties, subject)) {
                continue;
            }
            final double rollout = condition.rolloutPercentage().orElse(100.0);
            if (FlagHash.of(flag.key(), hashId, "") > rollout / 100.0) {
                outOfRollout = true;
                continue;
            }
            final double variantHash = FlagHash.of(flag.key(), hashId, "variant");
            final Optional<String> variant = condition.variant()
                    .filter(v -> flag.variants().stream().anyMatch(x -> x.key().equals(v)))
                    .or(() -> variant(flag, variantHash));
            return new Result(flag.key(), true, variant, "condition_match", Optional.of(i), payload(flag, variant));
        }
        return new Result(flag.key(), false, Optional.empty(), outOfRollout ? "out_of_rollout_bound" : "no_condition_match",
                Optional.empty(), Optional.empty());
    }

    /** The variant whose cumulative range [min, max) holds {@code hash}, if any. */
    static Optional<String> variant(final FlagDefinition flag, final double hash) {
        double min = 0;
        for (final FlagDefinition.Variant v : flag.variants()) {
            final double max = min + v.rolloutPercentage() / 100.0;
            if (hash >= min && hash < max) {
                return Optional.of(v.key());
            }
            min = max;
        }
        return Optional.empty();
    }

    private static boolean allMatch(final FlagDefinition.Condition condition, final ObjectNode properties, final Subject subject) {
        for (final FlagDefinition.Filter filter : condition.properties()) {
            if ("cohort".equals(filter.type())) {
                // In the cohort (in), or not (not_in); a cohort the project does not have matches nobody.
                final Optional<Boolean> member = filter.value() != null && filter.value().canConvertToLong()
                        ? subject.inCohort().apply(filter.value().asLong()) : Optional.empty();
                if (member.isEmpty() || member.get() == "not_in".equals(filter.operator())) {
                    return false;
                }
                continue;
            }
            final ObjectNode source = switch (filter.type()) {
                case "group" -> filter.groupTypeIndex().map(subject.groupTypes()::get).map(subject.groupProperties()::get).orElse(null);
                case "person" -> properties;
                // Flag dependencies are not evaluated yet: such a condition does not match.
                default -> null;
            };
            if (source == null && !"person".equals(filter.type())) {
                return false;
            }
            final JsonNode actual = source == null ? null : source.get(filter.key());
            if (!PropertyMatcher.matches(filter.operator(), filter.value(), actual, subject.now())) {
                return false;
            }
        }
        return true;
    }

    private static Optional<JsonNode> payload(final FlagDefinition flag, final Optional<String> variant) {
        final JsonNode payload = flag.payloads().get(variant.orElse("true"));
        return payload == null || payload.isNull() ? Optional.empty() : Optional.of(payload);
    }
}
