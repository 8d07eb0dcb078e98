package dev.eddy.gateway.auth;

import java.util.Collection;

/**
 * Personal API key scopes, PostHog's way: {@code object:read} or {@code object:write}, {@code *} for all;
 * a write scope also grants read on the same object.
 */
public final class Scope {
    public static final String ALL = "*";

    private Scope() {
    }

    public static boolean allows(final Collection<String> granted, final String required) {
        if (granted.contains(ALL) || granted.contains(required)) {
            return true;
        }
        if (required.endsWith(":read")) {
            final String object = required.substring(0, required.length() - ":read".length());
            return granted.contains(object + ":write");
        }
        return false;
    }
}
