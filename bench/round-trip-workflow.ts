/**
 * The cheapest workflow that calls activities one after another: what a Temporal round trip
 * costs on this machine with nothing of aca's in it (see round-trips.ts).
 */
import { proxyActivities } from '@temporalio/workflow';

const { nothing } = proxyActivities<{ nothing(): Promise<void> }>({ startToCloseTimeout: '10s' });

export async function roundTripsWorkflow(activities: number): Promise<void> {
  for (let i = 0; i < activities; i++) await nothing();
}
