// subscriptions/listen for 2026-07-28 clients. The SDK's handler serves each listen stream itself (acknowledgement,
// filter, keep-alive, teardown) from one event bus for every caller, and the bus is not told whose stream it feeds.
// This bus gives each stream the announcements of its own gateway's servers: the stream's caller, and the resources
// it asks updates of, are set around the request (listeningAs), and the bus's subscribe, which the SDK calls while
// it serves that request, reads them. Without them a stream gets nothing.
import { AsyncLocalStorage } from 'node:async_hooks';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';
import {
  ResourceNotFound,
  subscribeGatewayResource,
  UnknownGateway,
  watchGatewayOffers,
} from '../app/gateway-offers.js';
import type { UpstreamChange } from '../tools/tool.js';
import type { OfferCaller } from './offer-handlers.js';

export interface Listening extends OfferCaller {
  /** The resources whose updates the stream asks for (its filter's resourceSubscriptions). */
  resourceUris: readonly string[];
}

const listening = new AsyncLocalStorage<Listening>();

/** Serves a `subscriptions/listen` request (`run`) as `caller`'s stream. */
export function listeningAs<T>(caller: Listening, run: () => T): T {
  return listening.run(caller, run);
}

export function gatewayEventBus(): ServerEventBus {
  return {
    // Announcements come from the gateway's servers, for that gateway's streams only.
    publish: () => {},
    subscribe(deliver) {
      const caller = listening.getStore();
      if (!caller) return () => {};
      const { app, agentId } = caller;
      let stopped = false;
      const stops: (() => void)[] = [];
      const keep = (stop: () => void) => (stopped ? stop() : void stops.push(stop));
      const refused = (error: unknown) => {
        // A resource no server has, or a gateway removed: the stream gets no updates of it.
        if (!(error instanceof McpError || error instanceof ResourceNotFound || error instanceof UnknownGateway)) {
          caller.onError(error);
        }
      };
      watchGatewayOffers(app, agentId, (change) => deliver(eventOf(change))).then(keep, refused);
      for (const uri of new Set(caller.resourceUris)) {
        subscribeGatewayResource(app, agentId, uri).then(
          (subscription) => keep(() => void subscription.unsubscribe().catch(() => {})),
          refused,
        );
      }
      return () => {
        stopped = true;
        for (const stop of stops.splice(0)) stop();
      };
    },
  };
}

function eventOf(change: UpstreamChange): ServerEvent {
  switch (change.method) {
    case 'notifications/tools/list_changed':
      return { kind: 'tools_list_changed' };
    case 'notifications/prompts/list_changed':
      return { kind: 'prompts_list_changed' };
    case 'notifications/resources/list_changed':
      return { kind: 'resources_list_changed' };
    case 'notifications/resources/updated':
      return { kind: 'resource_updated', uri: change.uri };
  }
}
