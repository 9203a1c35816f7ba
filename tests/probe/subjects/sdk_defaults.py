"""A probe subject that configures nothing: each official SDK built with its defaults finds the
simulator through the environment the probe sets. Usage: sdk_defaults.py PROTOCOL (prompt on stdin)."""

import sys

protocol = sys.argv[1]
prompt = sys.stdin.read()
if protocol == "gemini":
    from google import genai

    client = genai.Client()  # kept: a Client closes its HTTP client when collected
    print(client.models.generate_content(model="gemini-2.5-flash", contents=prompt).text)
elif protocol == "bedrock":
    import boto3

    answer = boto3.client("bedrock-runtime").converse(modelId="us.amazon.nova-micro-v1:0", messages=[{"role": "user", "content": [{"text": prompt}]}])
    print("".join(b.get("text", "") for b in answer["output"]["message"]["content"]))
elif protocol == "anthropic":
    import anthropic

    message = anthropic.Anthropic().messages.create(model="claude-sonnet-4-5", max_tokens=256, messages=[{"role": "user", "content": prompt}])
    print("".join(b.text for b in message.content if b.type == "text"))
else:
    import openai

    if protocol == "openai_chat":
        print(openai.OpenAI().chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": prompt}]).choices[0].message.content)
    else:
        print(openai.OpenAI().responses.create(model="gpt-4o-mini", input=prompt).output_text)
