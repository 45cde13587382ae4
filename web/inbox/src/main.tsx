// The approval inbox: a Preact app on toolgate's public GraphQL API (urql over HTTP, graphql-ws for subscriptions).
import { render } from 'preact';
import { App } from './components/App';
import './styles.css';

render(<App />, document.getElementById('app')!);
