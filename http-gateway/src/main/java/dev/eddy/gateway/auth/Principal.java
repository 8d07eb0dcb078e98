package dev.eddy.gateway.auth;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Who a management request acts as: the user behind a personal API key, and what the key allows.
 *
 * @param userId         the key's owner
 * @param keyId          the key
 * @param scopes         granted scopes
 * @param scopedProjects when present, the only projects the key may touch
 */
public record Principal(long userId, String keyId, Set<String> scopes, Optional<List<Long>> scopedProjects) {

    public boolean allows(final String scope) {
        return Scope.allows(scopes, scope);
    }
}
