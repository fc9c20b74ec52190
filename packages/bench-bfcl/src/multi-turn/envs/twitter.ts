import * as ops from "../../py/ops.js";
import { pyStr } from "../../py/repr.js";
import { deepCopy, pyEquals, PyDict, truthy } from "../../py/value.js";
import type { Py } from "../../py/value.js";
import { BfclEnvironment } from "../environment.js";
import { asDict, asList, asStr, dictGet, has, item, iter, setItem } from "../python-access.js";

const DEFAULT_STATE = (): PyDict =>
  PyDict.of({
    username: "john",
    password: "john123",
    authenticated: false,
    tweets: new PyDict(),
    comments: new PyDict(),
    retweets: new PyDict(),
    following_list: ["alice", "bob"],
    tweet_counter: 0,
  });

const KEYS = ["username", "password", "authenticated", "tweets", "comments", "retweets", "following_list", "tweet_counter"];

/** Posting, retweeting, commenting and following (upstream `TwitterAPI`). */
export class TwitterAPI extends BfclEnvironment {
  readonly className = "TwitterAPI";
  private readonly state = new Map<string, Py>();

  override load(config: PyDict): void {
    const defaults = DEFAULT_STATE();
    for (const key of KEYS) this.state.set(key, config.has(key) ? config.get(key)! : deepCopy(defaults.get(key)!));
    // Scenario files key tweets by strings; upstream turns them into ints.
    const tweets = asDict(this.state.get("tweets")!, "items");
    this.state.set("tweets", new PyDict([...tweets].map(([k, v]) => [ops.toInt(k), v])));
  }

  override publicState(): Map<string, Py> {
    return new Map(this.state);
  }

  private get(key: string): Py {
    return this.state.get(key) ?? null;
  }

  private authenticated(): boolean {
    return truthy(this.get("authenticated"));
  }

  constructor(...args: ConstructorParameters<typeof BfclEnvironment>) {
    super(...args);
    this.define("authenticate_twitter", ["username", "password"], (username, password) => {
      if (pyEquals(username, this.get("username")) && pyEquals(password, this.get("password"))) {
        this.state.set("authenticated", true);
        return PyDict.of({ authentication_status: true });
      }
      return PyDict.of({ authentication_status: false });
    });
    this.define("posting_get_login_status", [], () => PyDict.of({ login_status: this.authenticated() }));
    this.define("post_tweet", ["content", { name: "tags", default: [] }, { name: "mentions", default: [] }], (content, tags, mentions) => {
      if (!this.authenticated()) return PyDict.of({ error: "User not authenticated. Please authenticate before posting." });
      const counter = this.get("tweet_counter");
      const tweet = PyDict.of({ id: counter, username: this.get("username"), content, tags, mentions });
      setItem(this.get("tweets"), counter, tweet);
      this.state.set("tweet_counter", ops.add(counter, 1));
      return tweet;
    });
    this.define("retweet", ["tweet_id"], (tweetId) => {
      if (!this.authenticated()) return PyDict.of({ error: "User not authenticated. Please authenticate before retweeting." });
      if (!has(this.get("tweets"), tweetId)) return PyDict.of({ error: `Tweet with ID ${pyStr(tweetId)} not found.` });
      const retweets = this.get("retweets");
      const username = this.get("username");
      if (!has(retweets, username)) setItem(retweets, username, []);
      const mine = item(retweets, username);
      if (has(mine, tweetId)) return PyDict.of({ retweet_status: "Already retweeted" });
      asList(mine, "append").push(tweetId);
      return PyDict.of({ retweet_status: "Successfully retweeted" });
    });
    this.define("comment", ["tweet_id", "comment_content"], (tweetId, content) => {
      if (!this.authenticated()) return PyDict.of({ error: "User not authenticated. Please authenticate before commenting." });
      if (!has(this.get("tweets"), tweetId)) return PyDict.of({ error: `Tweet with ID ${pyStr(tweetId)} not found.` });
      const comments = this.get("comments");
      if (!has(comments, tweetId)) setItem(comments, tweetId, []);
      asList(item(comments, tweetId), "append").push(PyDict.of({ username: this.get("username"), content }));
      return PyDict.of({ comment_status: "Comment added successfully" });
    });
    this.define("mention", ["tweet_id", "mentioned_usernames"], (tweetId, usernames) => {
      if (!has(this.get("tweets"), tweetId)) return PyDict.of({ error: `Tweet with ID ${pyStr(tweetId)} not found.` });
      const tweet = item(this.get("tweets"), tweetId);
      asList(item(tweet, "mentions"), "extend").push(...iter(usernames));
      return PyDict.of({ mention_status: "Users mentioned successfully" });
    });
    this.define("follow_user", ["username_to_follow"], (username) => {
      if (!this.authenticated()) return PyDict.of({ error: "User not authenticated. Please authenticate before following." });
      const following = this.get("following_list");
      if (has(following, username)) return PyDict.of({ follow_status: false });
      asList(following, "append").push(username);
      return PyDict.of({ follow_status: true });
    });
    this.define("list_all_following", [], () => {
      if (!this.authenticated()) return PyDict.of({ error: "User not authenticated. Please authenticate before listing following." });
      return PyDict.of({ following_list: this.get("following_list") });
    });
    this.define("unfollow_user", ["username_to_unfollow"], (username) => {
      if (!this.authenticated()) return PyDict.of({ error: "User not authenticated. Please authenticate before unfollowing." });
      const following = this.get("following_list");
      if (!has(following, username)) return PyDict.of({ unfollow_status: false });
      const list = asList(following, "remove");
      list.splice(list.findIndex((u) => pyEquals(u, username)), 1);
      return PyDict.of({ unfollow_status: true });
    });
    this.define("get_tweet", ["tweet_id"], (tweetId) => {
      if (!has(this.get("tweets"), tweetId)) return PyDict.of({ error: `Tweet with ID ${pyStr(tweetId)} not found.` });
      return item(this.get("tweets"), tweetId);
    });
    this.define("get_user_tweets", ["username"], (username) => this.tweets().filter((tweet) => pyEquals(item(tweet, "username"), username)));
    this.define("search_tweets", ["keyword"], (keyword) => {
      const needle = (): string => asStr(keyword, "lower").toLowerCase();
      return this.tweets().filter(
        (tweet) =>
          asStr(item(tweet, "content"), "lower").toLowerCase().includes(needle()) ||
          iter(item(tweet, "tags"))
            .map((tag) => asStr(tag, "lower").toLowerCase())
            .includes(needle()),
      );
    });
    this.define("get_tweet_comments", ["tweet_id"], (tweetId) => {
      if (!has(this.get("tweets"), tweetId)) return PyDict.of({ error: `Tweet with ID ${pyStr(tweetId)} not found.` });
      return dictGet(this.get("comments"), tweetId, []);
    });
    this.define("get_user_stats", ["username"], (username) => {
      const tweetCount = this.tweets().filter((tweet) => pyEquals(item(tweet, "username"), username)).length;
      const followingCount = pyEquals(username, this.get("username")) ? iter(this.get("following_list")).length : 0;
      const retweetCount = iter(dictGet(this.get("retweets"), username, [])).length;
      return PyDict.of({ tweet_count: tweetCount, following_count: followingCount, retweet_count: retweetCount });
    });
  }

  private tweets(): Py[] {
    return asDict(this.get("tweets"), "values").values();
  }
}
